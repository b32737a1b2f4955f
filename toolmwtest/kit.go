package toolmwtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// ServerConfig says what an SDK kit's Run and Check check, on servers of
// type S (mcpsdktest.Config and mcpgotest.Config are its instances).
type ServerConfig[S any] struct {
	// NewServer returns the server under test with its own tools and
	// chain, toolmw installed or not. It is called once per transport
	// that serves in the process; the kit adds its failing tools. A
	// [Command] transport's binary is the server: NewServer is not used
	// for it.
	NewServer func() S
	// WrapHTTP, if set, wraps the HTTP handler (the server's own HTTP
	// middleware stack).
	WrapHTTP func(http.Handler) http.Handler
	// Plan is what the run checks; an empty Plan.Transports is the kit's
	// default set, and the failures are the kit's Failures(Seed, Count).
	Plan
}

// BehaviourConfig says what an SDK kit's CheckBehaviour checks, on a
// server of type S.
type BehaviourConfig[S any] struct {
	// NewServer returns the server under test, with its chain; the check
	// adds a tool for each row of the table, natively registered.
	NewServer func() S
	// Causes, if set, is wired into the chain's diagnostics and audit log;
	// then the server side of each row is checked too.
	Causes *Causes
	// CallTimeout bounds each call. Default 10s.
	CallTimeout time.Duration
}

// Kit is what an SDK kit brings to the runs that every SDK kit makes
// alike: its name, its default transports, its failures, how it registers
// tools on its server and its connector. toolmwtest/mcpsdktest and
// toolmwtest/mcpgotest are a Kit each; a third SDK's kit can be one too.
type Kit[S any] struct {
	// Name prefixes the kit's errors ("mcpsdktest").
	Name string
	// Transports is the default of an empty Plan.Transports.
	Transports []Transport
	// Failures makes the failures for a seed and a count ([Generate], or
	// [GenerateWith] adding the SDK's own shapes).
	Failures func(seed int64, n int) []Failure
	// AddFailingTools registers one tool per failure on a server, named
	// as [ToolName] says, and [AliveTool].
	AddFailingTools func(s S, fs []Failure)
	// AddTool registers on s a native tool named name that takes any
	// object and answers with run's reply as the SDK's result, or with
	// run's error (or panic) as the SDK's handlers do.
	AddTool func(s S, name string, run func() (Reply, error))
	// AddCountTool registers on s the tool of the behaviour table's
	// invalid-arguments row ([RowInvalid]): it takes {"count": integer},
	// required, decoded by the SDK's typed handler, and answers "counted".
	AddCountTool func(s S, name string)
	// NewGuarded returns a server without tools with toolmw installed
	// around m, its tools filtered by the adapter's WithVisibility(visible),
	// for [Kit.CheckVisibilityObserve].
	NewGuarded func(m toolctx.Middleware, visible func(*toolctx.Request) bool) S
	// Identify, if set, wraps the HTTP handler of [Kit.CheckVisibilityObserve]
	// inside the layer that puts the caller's identity in each request's
	// context (toolctx.WithIdentity), where the SDK needs more to hand it
	// to a session's calls (go-sdk: mcpsdk.ForwardIdentity).
	Identify func(http.Handler) http.Handler
	// Connect serves s over tr, its HTTP handler wrapped by wrap, and
	// connects the SDK's client to it, recording every byte from the
	// server. For a [Command] transport s is the zero S: the binary is
	// the server ([StartCommand]).
	Connect func(ctx context.Context, s S, wrap func(http.Handler) http.Handler, tr Transport) (Conn, error)
}

// Run runs [Kit.Check] and reports each problem with t.Error; it returns
// the result.
func (k Kit[S]) Run(t testing.TB, cfg ServerConfig[S]) *Result {
	t.Helper()
	res, err := k.Check(context.Background(), cfg)
	return Report(t, res, err)
}

// Check runs cfg's plan ([Check]) on the servers cfg.NewServer returns, each
// with the kit's failing tools, and returns what it found.
func (k Kit[S]) Check(ctx context.Context, cfg ServerConfig[S]) (*Result, error) {
	plan := cfg.Plan
	if len(plan.Transports) == 0 {
		plan.Transports = k.Transports
	}
	wrap := func(h http.Handler) http.Handler {
		if cfg.WrapHTTP != nil {
			return cfg.WrapHTTP(h)
		}
		return h
	}
	return Check(ctx, plan, k.Failures, func(ctx context.Context, tr Transport, fs []Failure) (Conn, error) {
		var s S
		if tr.command == nil {
			if cfg.NewServer == nil {
				return Conn{}, fmt.Errorf("%s: Config.NewServer is nil", k.Name)
			}
			s = cfg.NewServer()
			k.AddFailingTools(s, fs)
		}
		return k.Connect(ctx, s, wrap, tr)
	})
}

// CheckBehaviour asserts the rows of toolmw's behaviour table (what the
// caller sees, what the server keeps) on the server cfg.NewServer returns,
// over [InMemory], as [CheckRows] describes. Each broken row is a problem
// of the result.
func (k Kit[S]) CheckBehaviour(ctx context.Context, cfg BehaviourConfig[S]) (*Result, error) {
	if cfg.NewServer == nil {
		return nil, errors.New(k.Name + ": BehaviourConfig.NewServer is nil")
	}
	return CheckTable(ctx, cfg.Causes, cfg.CallTimeout, func(secret string) (Conn, error) {
		s := cfg.NewServer()
		k.addRowTools(s, secret)
		return k.Connect(ctx, s, func(h http.Handler) http.Handler { return h }, InMemory)
	})
}

// Reply is a tool result, as a Kit's AddTool registers it.
type Reply struct {
	Text       string
	IsError    bool
	Structured any // nil: none
}

// addRowTools registers the tools of the behaviour table's rows
// ([CheckRows]) for secret, a fresh canary.
func (k Kit[S]) addRowTools(s S, secret string) {
	k.AddTool(s, RowRaw, func() (Reply, error) {
		return Reply{}, fmt.Errorf("query orders: dial %s: connection refused", secret)
	})
	k.AddTool(s, RowPanic, func() (Reply, error) { panic("unreachable backend " + secret) })
	k.AddTool(s, RowUnencodable, func() (Reply, error) {
		return Reply{Text: "ok", Structured: Unencodable{Secret: secret}}, nil
	})
	k.AddTool(s, RowPublic, func() (Reply, error) {
		return Reply{}, errs.NotFound(RowPublicMessage).WithDetail(map[string]any{"id": 7}).WithCause(errors.New(secret))
	})
	k.AddTool(s, RowOwnIsError, func() (Reply, error) { return Reply{IsError: true, Text: RowOwnText}, nil })
	k.AddCountTool(s, RowInvalid)
}

// Returned runs f as a tool handler does: the result it carries ([Carry]),
// or its error (or its panic, or its runtime.Goexit).
func Returned[R any](f Failure) (R, error) {
	err := f.Call()
	if res, ok := Carried[R](err); ok {
		return res, nil
	}
	var zero R
	return zero, err
}
