package contain

import "iter"

// Run calls f and returns once f has returned, panicked or called
// runtime.Goexit. escaped reports that f did not return; v is then what
// recover returned (nil for a Goexit).
//
// f runs on a coroutine (iter.Pull): the caller's thread switches to it
// and back without the scheduler, so no other thread is woken, which a
// go statement and a wait would do on every call. A Goexit cannot be
// stopped; f's coroutine hands control back in the middle of it, and a
// goroutine of its own lets it finish.
func Run(f func()) (v any, escaped bool) {
	goexit := false
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		returned := false
		defer func() {
			if returned {
				return
			}
			v, escaped = recover(), true
			if v == nil {
				goexit = true
				yield(struct{}{})
			}
		}()
		f()
		returned = true
	})
	next()
	if goexit {
		go stop()
		return nil, true
	}
	stop()
	return v, escaped
}
