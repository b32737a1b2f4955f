package errchain

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"
)

// MaxTime is how long [As], [Is] and [Within] wait for the methods of an
// error whose chain holds a type they do not know (see [Known]): an Unwrap,
// Is or As method that has not returned by then (it waits on a lock, a
// channel or the network, or loops) is given up on, and the walk counts as
// no match.
const MaxTime = time.Second

// Known reports whether every error in err's chain, as far as a walk goes
// (see [MaxDepth], [MaxNodes]), has a type whose Unwrap, Is and As methods
// are known to return at once: the standard library's (errors.New,
// fmt.Errorf, errors.Join, package context, runtime errors, syscall.Errno,
// the error types of os, io/fs, net, net/url, encoding/json and the like)
// and toolmw's own (the packages of module github.com/toolmw/toolmw, its
// test packages excepted). A nil err is known. Only the Unwrap methods of
// known types are called, so Known itself returns at once.
//
// [As] and [Is] walk a known chain on the caller's goroutine and any other
// within [MaxTime] on a goroutine of their own (see [Within]).
func Known(err error) bool {
	budget := MaxNodes
	return known(err, 0, &budget)
}

func known(err error, depth int, budget *int) bool {
	for ; err != nil; depth++ {
		if *budget <= 0 || depth >= MaxDepth {
			return true // no walk goes further
		}
		*budget--
		if !knownType(reflect.TypeOf(err)) {
			return false
		}
		many, next := unwrap(err)
		if many == nil {
			err = next
			continue
		}
		for _, inner := range many {
			if !known(inner, depth+1, budget) {
				return false
			}
		}
		return true
	}
	return true
}

// knownType reports whether t (or, for a pointer, what it points to) is a
// type of a package whose error methods are known to return at once.
func knownType(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	path := t.PkgPath()
	if rest, ok := strings.CutPrefix(path, "github.com/toolmw/toolmw/"); ok {
		return rest != "" && !strings.HasSuffix(path, "_test")
	}
	switch path {
	case "errors", "fmt", "context", "runtime", "syscall", "io", "io/fs", "os", "os/exec",
		"internal/poll", "net", "net/http", "net/url", "net/netip", "encoding/json",
		"encoding/base64", "encoding/hex", "strconv", "time", "crypto/tls", "crypto/x509",
		"database/sql", "database/sql/driver", "bufio", "compress/gzip", "archive/zip":
		return true
	}
	return false
}

// maxNesting is how deep calls of Tracked (and Within) may nest on one
// goroutine. A walk inside a walk is ordinary (Normalize's rules call As);
// deeper nesting is a method that recurses through Tracked (an Is method
// that normalizes its own error, say), which would otherwise recurse until
// its goroutine's stack ran out, a fatal error.
const maxNesting = 8

// GaveUp is the report of a walk that [Tracked] gave up on: which method of
// which error it was calling, and why it gave up.
type GaveUp struct {
	// Method is the method the walk was in: "Unwrap", "Is", "As", or the
	// name its function gave [Walker.Enter] ("Map"); "" when it had not
	// called one yet.
	Method string
	// Type is the Go type of the error whose method it was (as %T prints
	// it).
	Type string
	// Why is "did not return within 1s", "called runtime.Goexit" or
	// "recursed" (it went on calling Tracked, through Normalize, say,
	// deeper than any walk does).
	Why string
}

// track is what a tracked walk is calling, read by the goroutine that
// waits for it.
type track struct {
	mu     sync.Mutex
	method string
	err    error
}

func (t *track) set(method string, err error) {
	t.mu.Lock()
	t.method, t.err = method, err
	t.mu.Unlock()
}

func (t *track) gaveUp(why string) *GaveUp {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := &GaveUp{Method: t.method, Why: why}
	if t.err != nil {
		g.Type = reflect.TypeOf(t.err).String()
	}
	return g
}

// recursion is the panic value with which a call of Tracked nested too
// deep unwinds to the outermost one, which gives up: the walk's own
// recovers (of a panicking Unwrap, Is or As) pass it on.
type recursion struct{}

// repanicRecursion panics again with r when r is the recursion panic.
func repanicRecursion(r any) {
	if _, ok := r.(recursion); ok {
		panic(r)
	}
}

// RepanicRecursion is for code that recovers the panics of user code
// called inside a [Tracked] walk (errs.Normalizer's Map): it panics again
// with r when r is the panic of a recursion that the outermost walk must
// see, and returns otherwise.
func RepanicRecursion(r any) { repanicRecursion(r) }

// Tracked runs f with a [Walker] for [AsIn] and [IsIn], and waits for it
// at most [MaxTime]. It returns what f returned and nil, or the zero T and
// a report of what f was calling when it gave up: f had not returned by
// then, called runtime.Goexit, or recursed through Tracked deeper than a
// walk inside a walk. f runs on a goroutine of its own, which is left
// behind when it blocks (nothing can end it; what it returns later is
// dropped); called from inside f, Tracked runs its own f on the same
// goroutine, within the outer bound, untracked (the outer walk's report
// names the method that called it). f must not panic.
func Tracked[T any](f func(w *Walker) T) (T, *GaveUp) {
	var zero T
	switch n := nesting(); {
	case n >= maxNesting:
		panic(recursion{}) // caught by the outermost Tracked, which gives up
	case n > 0:
		return f(&Walker{budget: MaxNodes}), nil
	}
	t := &track{}
	done := make(chan T, 1)
	ended := make(chan string, 1)
	go func() {
		returned := false
		defer func() {
			if returned {
				return
			}
			r := recover()
			switch r.(type) {
			case nil: // runtime.Goexit: it ends only this goroutine
				ended <- "called runtime.Goexit"
			case recursion:
				ended <- "recursed"
			default:
				panic(r)
			}
		}()
		v := f(&Walker{budget: MaxNodes, track: t})
		returned = true
		done <- v
	}()
	timer := time.NewTimer(MaxTime)
	defer timer.Stop()
	select {
	case v := <-done:
		return v, nil
	case why := <-ended:
		return zero, t.gaveUp(why)
	case <-timer.C:
		return zero, t.gaveUp("did not return within " + MaxTime.String())
	}
}

// Within runs f as [Tracked] does, and reports whether it returned.
func Within[T any](f func() T) (T, bool) {
	v, gave := Tracked(func(*Walker) T { return f() })
	return v, gave == nil
}

// trackedPrefix starts the names of Tracked's instances and of the
// functions they run.
const trackedPrefix = "github.com/toolmw/toolmw/internal/errchain.Tracked["

// nesting counts the frames of Tracked on the calling goroutine's stack,
// Tracked's caller's own excepted: 0 outside any f of Tracked.
func nesting() int {
	pcs := make([]uintptr, 512)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	n := 0
	for {
		fr, more := frames.Next()
		if strings.HasPrefix(fr.Function, trackedPrefix) {
			n++
		}
		if !more {
			return n
		}
	}
}

// asWithin is As for a chain that is not Known.
func asWithin[E error](err error) (E, bool) {
	type found struct {
		e  E
		ok bool
	}
	r, _ := Tracked(func(w *Walker) found {
		e, ok := as[E](err, 0, w)
		return found{e, ok}
	})
	return r.e, r.ok
}

// isWithin is Is for a chain that is not Known.
func isWithin(err, target error) bool {
	ok, _ := Tracked(func(w *Walker) bool {
		return is(err, target, 0, w)
	})
	return ok
}
