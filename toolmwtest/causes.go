package toolmwtest

import (
	"context"
	"strings"
	"sync"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/internal/contain"
	"github.com/toolmw/toolmw/middleware"
)

// Causes collects what the server side kept of failures: the raw text of
// each diagnostics event and the message of each audit row. Wire
// [Causes.Diagnostics] and [Causes.Emitter] into the chain under test, and a
// runner checks that every raw cause reached one of them. It is safe for
// concurrent use; the zero Causes is ready.
type Causes struct {
	mu          sync.Mutex
	diagnostics []string // the raw text of each diagnostics event
	rows        []string // the message of each audit row
}

// Diagnostics returns a diagnostics hook that records each event's raw
// error, then calls next when it is not nil.
func (c *Causes) Diagnostics(next middleware.DiagnosticsFunc) middleware.DiagnosticsFunc {
	return func(ctx context.Context, ev middleware.DiagnosticEvent) {
		if err := ev.Cause(); err != nil {
			c.add(&c.diagnostics, safeText(err.Error))
		}
		if next != nil {
			next(ctx, ev)
		}
	}
}

// Emitter returns an audit emitter that records each row's message, then
// emits the row to next when it is not nil.
func (c *Causes) Emitter(next audit.Emitter) audit.Emitter {
	return audit.EmitterFunc(func(ctx context.Context, r audit.Record) {
		c.add(&c.rows, r.Message)
		if next != nil {
			next.Emit(ctx, r)
		}
	})
}

// Saw reports whether s appears in a recorded diagnostics event or row.
func (c *Causes) Saw(s string) bool { return c.SawDiagnostic(s) || c.SawRow(s) }

// SawDiagnostic reports whether s appears in a recorded diagnostics event.
func (c *Causes) SawDiagnostic(s string) bool { return c.contains(&c.diagnostics, s) }

// SawRow reports whether s appears in a recorded audit row's message.
func (c *Causes) SawRow(s string) bool { return c.contains(&c.rows, s) }

func (c *Causes) contains(list *[]string, s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range *list {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

func (c *Causes) add(list *[]string, s string) {
	c.mu.Lock()
	*list = append(*list, s)
	c.mu.Unlock()
}

// safeText returns f's text, or "" if f panics or calls runtime.Goexit (an
// error whose Error method does, which the kit itself generates): run
// contained, so that the hook returns and the chain goes on.
func safeText(f func() string) (s string) {
	if _, escaped := contain.Run(func() { s = f() }); escaped {
		return ""
	}
	return s
}
