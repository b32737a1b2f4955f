package errs

import (
	"fmt"
	"time"

	"github.com/toolmw/toolmw/internal/errchain"
)

// GaveUpError is the cause recorded for a failure whose error [Normalizer]
// gave up on (see [Normalizer.NormalizeCause]): a method of its chain (an
// Unwrap, Is or As, or the Normalizer's Map) blocked past
// [MaxNormalizeTime], called runtime.Goexit or recursed. Its text says so,
// naming the method and its type, followed by the error's own description
// (its Error text, bounded in time as [Describe] is):
//
//	normalization gave up: (*db.connErr).Is did not return within 1s; the error: dial 10.0.0.7:5432: connection refused
//
// It is the server's, as any cause is: the client got the generic message.
// It does not wrap the error (a walk of its chain would call the method
// that did not return again): [GaveUpError.Err] returns it.
type GaveUpError struct {
	err    error
	method string
	typ    string
	why    string
	text   string
}

// Error says why normalization gave up, and describes the error.
func (e *GaveUpError) Error() string { return e.text }

// Err returns the error normalization gave up on. Its methods may not
// return: do not walk its chain (errors.Is, errors.As) on a path that must.
func (e *GaveUpError) Err() error { return e.err }

// Method returns the method that did not return: "Unwrap", "Is", "As" or
// "Map" (the Normalizer's); "" when none had been called.
func (e *GaveUpError) Method() string { return e.method }

// Type returns the Go type of the error whose method it was, as %T prints
// it.
func (e *GaveUpError) Type() string { return e.typ }

// Why returns why it was given up on: "did not return within 1s", "called
// runtime.Goexit" or "recursed".
func (e *GaveUpError) Why() string { return e.why }

// bounded normalizes err, whose chain is not known, on a goroutine of its
// own (errchain.Tracked).
func (n Normalizer) bounded(err error, ended bool) (Public, bool, error) {
	type outcome struct {
		pub      Public
		scrubbed bool
	}
	o, gave := errchain.Tracked(func(w *errchain.Walker) outcome {
		pub, scrubbed := n.rules(w, err, ended)
		return outcome{pub, scrubbed}
	})
	if gave == nil {
		return o.pub, o.scrubbed, err
	}
	// Nothing public can be read from err.
	return n.generic(), true, newGaveUp(err, gave)
}

func newGaveUp(err error, g *errchain.GaveUp) *GaveUpError {
	what := "normalization gave up"
	switch {
	case g.Method != "" && g.Method == "Map":
		what += ": the Normalizer's Map on " + g.Type + " " + g.Why
	case g.Method != "":
		what += ": (" + g.Type + ")." + g.Method + " " + g.Why
	default:
		what += ": it " + g.Why
	}
	return &GaveUpError{err: err, method: g.Method, typ: g.Type, why: g.Why,
		text: what + "; the error: " + errorText(err)}
}

// errorText is err's Error text, bounded as [Describe] is, but without
// Describe's walk of err's chain for private causes, which would call the
// method that did not return again.
func errorText(err error) string {
	done := make(chan string, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Sprintf("!(%T: its Error method panicked)", err)
			}
		}()
		done <- err.Error()
	}()
	t := time.NewTimer(MaxDescribeTime)
	defer t.Stop()
	select {
	case s := <-done:
		return cutDescription(s)
	case <-t.C:
		return fmt.Sprintf("!(%T: its Error method did not return within %v)", err, MaxDescribeTime)
	}
}
