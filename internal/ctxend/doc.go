// Package ctxend tells whether a call's context has ended, reading the
// deadline itself rather than trusting ctx.Err() alone.
//
// ctx.Err() becomes DeadlineExceeded when the context's timer fires, and on
// a loaded machine the timer goroutine can run tens of milliseconds after
// the deadline: a decision taken from ctx.Err() alone ("did the call run
// past its deadline?") is then wrong for a result returned in that window.
// The clock is not late.
package ctxend
