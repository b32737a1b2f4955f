package errchain

import (
	"reflect"
	"runtime"
	"strings"
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

// maxNesting is how deep calls of Within may nest on one goroutine. A
// walk inside a walk is ordinary (Normalize's rules call As); deeper
// nesting is a method that recurses through Within (an Is method that
// normalizes its own error, say), which would otherwise recurse until its
// goroutine's stack ran out, a fatal error.
const maxNesting = 8

// Within runs f and waits for it at most [MaxTime]. It returns what f
// returned and true, or the zero T and false when f had not returned by
// then or called runtime.Goexit. f runs on a goroutine of its own, which
// is left behind when it blocks (nothing can end it; what it returns later
// is dropped); called from inside f, Within runs its own f on the same
// goroutine, within the outer bound, and gives up at once when such calls
// nest deeper than a walk inside a walk does, as when a method recurses
// through Within. f must not panic.
func Within[T any](f func() T) (T, bool) {
	var zero T
	switch n := nesting(); {
	case n >= maxNesting:
		return zero, false
	case n > 0:
		return f(), true
	}
	done := make(chan T, 1)
	exited := make(chan struct{})
	go func() {
		returned := false
		defer func() {
			if !returned { // runtime.Goexit: it ends only this goroutine
				close(exited)
			}
		}()
		v := f()
		returned = true
		done <- v
	}()
	t := time.NewTimer(MaxTime)
	defer t.Stop()
	select {
	case v := <-done:
		return v, true
	case <-exited:
		return zero, false
	case <-t.C:
		return zero, false
	}
}

// withinPrefix starts the names of Within's instances and of the functions
// they run.
const withinPrefix = "github.com/toolmw/toolmw/internal/errchain.Within["

// nesting counts the frames of Within on the calling goroutine's stack,
// Within's caller's own excepted: 0 outside any f of Within.
func nesting() int {
	pcs := make([]uintptr, 512)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	n := 0
	for {
		fr, more := frames.Next()
		if strings.HasPrefix(fr.Function, withinPrefix) {
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
	r, _ := Within(func() found {
		budget := MaxNodes
		e, ok := as[E](err, 0, &budget)
		return found{e, ok}
	})
	return r.e, r.ok
}

// isWithin is Is for a chain that is not Known.
func isWithin(err, target error) bool {
	ok, _ := Within(func() bool {
		budget := MaxNodes
		return is(err, target, 0, &budget)
	})
	return ok
}
