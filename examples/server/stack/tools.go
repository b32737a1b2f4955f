package stack

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// The demo tools. Together they show every row of the behaviour table:
// success, validation feedback, a public error, a raw backend error, a panic
// and a slow call (cancellation and the timeout interceptor).

// GreetIn is the input of the greet tool.
type GreetIn struct {
	Name    string `json:"name" jsonschema:"who to greet"`
	Excited bool   `json:"excited,omitempty" jsonschema:"end with an exclamation mark"`
}

// GreetOut is the output of the greet tool.
type GreetOut struct {
	Greeting string `json:"greeting"`
}

// MaxNameLen is the longest name greet takes, in characters.
const MaxNameLen = 200

func greet(_ context.Context, _ *toolctx.Request, in GreetIn) (GreetOut, error) {
	if strings.TrimSpace(in.Name) == "" {
		return GreetOut{}, errs.InvalidArguments("name must not be empty").
			WithDetail(map[string]any{"field": "name"})
	}
	if utf8.RuneCountInString(in.Name) > MaxNameLen {
		return GreetOut{}, errs.InvalidArguments(fmt.Sprintf("name: must be at most %d characters long", MaxNameLen)).
			WithDetail(map[string]any{"field": "name"})
	}
	g := "Hello, " + in.Name
	if in.Excited {
		g += "!"
	} else {
		g += "."
	}
	return GreetOut{Greeting: g}, nil
}

// DivideIn is the input of the divide tool: the schema requires both
// numbers, so a call with a string or a missing field gets validation
// feedback.
type DivideIn struct {
	A float64 `json:"a" jsonschema:"the dividend"`
	B float64 `json:"b" jsonschema:"the divisor, not zero"`
}

// DivideOut is the output of the divide tool.
type DivideOut struct {
	Quotient float64 `json:"quotient"`
}

func divide(_ context.Context, _ *toolctx.Request, in DivideIn) (DivideOut, error) {
	if in.B == 0 {
		return DivideOut{}, errs.InvalidArguments("b must not be zero").
			WithDetail(map[string]any{"field": "b"})
	}
	q := in.A / in.B
	if math.IsInf(q, 0) {
		// JSON has no infinity: say so rather than fail to encode it.
		return DivideOut{}, errs.InvalidArguments("a / b: number out of range").
			WithDetail(map[string]any{"field": "a"})
	}
	return DivideOut{Quotient: q}, nil
}

// OrderIn is the input of the lookup_order tool.
type OrderIn struct {
	ID int `json:"id" jsonschema:"the order number"`
}

// OrderOut is the output of the lookup_order tool.
type OrderOut struct {
	ID     int    `json:"id"`
	Status string `json:"status"`
}

// lookupOrder knows order 1 only; anything else is a public not-found
// error whose private cause names the table it looked in.
func lookupOrder(_ context.Context, _ *toolctx.Request, in OrderIn) (OrderOut, error) {
	if in.ID == 1 {
		return OrderOut{ID: 1, Status: "shipped"}, nil
	}
	return OrderOut{}, errs.NotFound(fmt.Sprintf("order %d does not exist", in.ID)).
		WithDetail(map[string]any{"id": in.ID}).
		WithCause(fmt.Errorf("select from orders_v2 where id=%d: no rows", in.ID))
}

// ReportIn is the input of the sales_report tool.
type ReportIn struct {
	Region string `json:"region" jsonschema:"the sales region"`
}

// ReportOut is the output of the sales_report tool.
type ReportOut struct {
	Total float64 `json:"total"`
}

// FakeDSN is the connection string the failing backend leaks in its error
// text. The client must never see it; the audit row must.
const FakeDSN = "postgres://reporting:hunter2@db-7.internal.example:5432/sales"

// salesReport's backend is down: the raw error carries a connection string.
func salesReport(_ context.Context, _ *toolctx.Request, in ReportIn) (ReportOut, error) {
	return ReportOut{}, fmt.Errorf("sales report for %q: dial %s: connection refused", in.Region, FakeDSN)
}

// CrashIn is the input of the crash tool.
type CrashIn struct {
	Reason string `json:"reason,omitempty" jsonschema:"what to panic with"`
}

// crash panics, as a tool with a bug would. The panic value carries a
// secret to show that it never reaches the client.
func crash(_ context.Context, _ *toolctx.Request, in CrashIn) (GreetOut, error) {
	var cache map[string]string
	if in.Reason == "" {
		//lint:ignore SA5000 the nil-map write is the deliberate panic under test
		cache["key"] = "value" // assignment to entry in nil map
	}
	panic("crash tool: " + in.Reason + " (api key " + PanicSecret + ")")
}

// PanicSecret is in the crash tool's panic value: the client must never see
// it; the audit row (the panic message) and diagnostics do.
const PanicSecret = "sk-demo-0000"

// SlowIn is the input of the slow tool.
type SlowIn struct {
	Seconds float64 `json:"seconds" jsonschema:"how long to work, from 0 to 3600"`
}

// SlowOut is the output of the slow tool.
type SlowOut struct {
	Slept float64 `json:"slept"`
}

// MaxSlowSeconds is the longest the slow tool works. Longer would never
// finish within any sensible -slow-timeout, and seconds past ~9.2e9 would
// overflow a time.Duration (1e308 became an instant success).
const MaxSlowSeconds = 3600

// slow works for the given time, honouring cancellation; the server's
// chain gives it a deadline (see -slow-timeout). As it starts it reports
// progress 0 ("started"), which a client that gave a progress token hears:
// it then knows the call is running.
func slow(ctx context.Context, _ *toolctx.Request, in SlowIn) (SlowOut, error) {
	if !(in.Seconds >= 0 && in.Seconds <= MaxSlowSeconds) { // NaN fails too
		return SlowOut{}, errs.InvalidArguments(fmt.Sprintf("seconds: must be between 0 and %d", MaxSlowSeconds)).
			WithDetail(map[string]any{"field": "seconds"})
	}
	_ = toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 0, Total: in.Seconds, Message: "started"}) // best effort: the work does not depend on it
	start := time.Now()
	t := time.NewTimer(time.Duration(in.Seconds * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return SlowOut{Slept: time.Since(start).Seconds()}, nil
	case <-ctx.Done():
		return SlowOut{}, ctx.Err()
	}
}
