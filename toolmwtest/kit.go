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

// ServerConfig says what [Kit.Run] and [Kit.Check] check, on servers of
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

// BehaviourConfig says what [Kit.CheckBehaviour] checks, on a server of
// type S (mcpsdktest.BehaviourConfig and mcpgotest.BehaviourConfig are its
// instances).
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

// Kit is an SDK's connector for the runs that every SDK kit makes alike,
// on servers of type S whose tools answer with results of type R: its
// name, its default transports, its own failure shapes, how it registers
// tools on its server, and how its client connects and reads a result
// (Dial and Answer; the recording, the HTTP server and the liveness probe
// are the Kit's own). The runs are Kit's methods; toolmwtest/mcpsdktest
// and toolmwtest/mcpgotest each hold only their SDK's Kit
// (mcpsdktest.Kit(), mcpgotest.Kit()), and a third SDK's kit can be one
// too.
type Kit[S, R any] struct {
	// Name prefixes the kit's errors ("mcpsdktest") and tags the canaries
	// of its own shapes.
	Name string
	// Transports is the default of an empty Plan.Transports.
	Transports []Transport
	// Shapes are the SDK's own failure shapes, which [Kit.Failures] adds
	// to [Generate]'s ([GenerateWith]).
	Shapes []func(canary string) Failure
	// AddTool registers on s a native tool named name, described by
	// description, that takes any object and answers with run's result,
	// or with run's error (or panic) as the SDK's raw handlers do.
	AddTool func(s S, name, description string, run func() (R, error))
	// Result is the SDK's result of a Reply: its text as the one content
	// block, IsError, and Structured as the structured content.
	Result func(Reply) R
	// AddTypedFailingTool registers on s the tool named name, described by
	// description, that fails as f ([Returned]) through the SDK's typed
	// way of registering a tool, and reports whether it did: false where
	// that way cannot fail as f (the kit registers it with AddTool then).
	// [Kit.AddFailingTools] alternates, AddTool for even indexes and
	// AddTypedFailingTool for odd ones, so that each of the SDK's ways of
	// turning an error into a response is tried.
	AddTypedFailingTool func(s S, name, description string, f Failure) bool
	// AddCountTool registers on s the tool of the behaviour table's
	// invalid-arguments row ([RowInvalid]): it takes {"count": integer},
	// required ([CountArgs]), decoded by the SDK's typed handler, and
	// answers [RowCountText].
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
	// Dial serves s over tr and connects the SDK's client to it through
	// w: every byte the client receives goes to w.Received (an HTTP
	// transport's with [Wire.HTTP]'s server and client), and what Dial
	// starts is stopped with [Wire.OnClose]. For a [Command] transport s
	// is the zero S: the binary is the server ([StartCommand]). It returns
	// an error for a transport the SDK's kit does not serve.
	Dial func(ctx context.Context, s S, tr Transport, w *Wire) (Client[R], error)
	// Answer is what a model reads of a result the SDK's client decoded
	// (the inverse of Result); r may be the zero R.
	Answer func(r R) Answer
}

// Run runs [Kit.Check] and reports each problem with t.Error; it returns
// the result.
func (k Kit[S, R]) Run(t testing.TB, cfg ServerConfig[S]) *Result {
	t.Helper()
	res, err := k.Check(context.Background(), cfg)
	return Report(t, res, err)
}

// Check runs cfg's plan ([Check]) on the servers cfg.NewServer returns, each
// with the kit's failing tools, and returns what it found.
func (k Kit[S, R]) Check(ctx context.Context, cfg ServerConfig[S]) (*Result, error) {
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
		return k.connect(ctx, s, wrap, tr)
	})
}

// CheckBehaviour asserts the rows of toolmw's behaviour table (what the
// caller sees, what the server keeps) on the server cfg.NewServer returns,
// over [InMemory], as [CheckRows] describes. Each broken row is a problem
// of the result.
func (k Kit[S, R]) CheckBehaviour(ctx context.Context, cfg BehaviourConfig[S]) (*Result, error) {
	if cfg.NewServer == nil {
		return nil, errors.New(k.Name + ": BehaviourConfig.NewServer is nil")
	}
	return CheckTable(ctx, cfg.Causes, cfg.CallTimeout, func(secret string) (Conn, error) {
		s := cfg.NewServer()
		k.addRowTools(s, secret)
		return k.connect(ctx, s, nil, InMemory)
	})
}

// Failures returns the failures [Kit.Run] registers for seed and n: those
// of [Generate], and the SDK's own [Kit.Shapes].
func (k Kit[S, R]) Failures(seed int64, n int) []Failure {
	return GenerateWith(seed, n, k.Shapes, k.Name)
}

// AddFailingTools registers one tool per failure on s, the i-th named
// [ToolName](i) (with [Kit.AddTool] for even indexes, with
// [Kit.AddTypedFailingTool] for odd ones), and [AliveTool]. Register them
// before installing toolmw or after: the adapters wrap natively
// registered tools.
func (k Kit[S, R]) AddFailingTools(s S, fs []Failure) {
	k.addReply(s, AliveTool, func() (Reply, error) { return Reply{Text: "ok"}, nil })
	for i, f := range fs {
		name, desc := ToolName(i), "toolmwtest: fails as "+f.Shape
		if i%2 == 1 && k.AddTypedFailingTool(s, name, desc, f) {
			continue
		}
		k.AddTool(s, name, desc, func() (R, error) { return Returned[R](f) })
	}
}

// AddFailingToolsFromEnv registers the failures [Kit.Run] asks for through
// [FailuresEnv], in a server binary served over stdio (a [Command]
// transport); it does nothing when the variable is unset, and returns an
// error when it is malformed.
func (k Kit[S, R]) AddFailingToolsFromEnv(s S) error {
	fs, err := FailuresFromEnv(k.Failures)
	if fs != nil {
		k.AddFailingTools(s, fs)
	}
	return err
}

// Reply is a tool result, as the Kit's own tools answer ([Kit.Result]).
type Reply struct {
	Text       string
	IsError    bool
	Structured any // nil: none
}

// addReply registers with AddTool the tool named name that answers with
// run's reply as the SDK's result, or with run's error (or panic).
func (k Kit[S, R]) addReply(s S, name string, run func() (Reply, error)) {
	k.AddTool(s, name, "toolmwtest: "+name, func() (R, error) {
		r, err := run()
		if err != nil {
			var zero R
			return zero, err
		}
		return k.Result(r), nil
	})
}

// addRowTools registers the tools of the behaviour table's rows
// ([CheckRows]) for secret, a fresh canary.
func (k Kit[S, R]) addRowTools(s S, secret string) {
	k.addReply(s, RowRaw, func() (Reply, error) {
		return Reply{}, fmt.Errorf("query orders: dial %s: connection refused", secret)
	})
	k.addReply(s, RowPanic, func() (Reply, error) { panic("unreachable backend " + secret) })
	k.addReply(s, RowUnencodable, func() (Reply, error) {
		return Reply{Text: "ok", Structured: Unencodable{Secret: secret}}, nil
	})
	k.addReply(s, RowPublic, func() (Reply, error) {
		return Reply{}, errs.NotFound(RowPublicMessage).WithDetail(map[string]any{"id": 7}).WithCause(errors.New(secret))
	})
	k.addReply(s, RowOwnIsError, func() (Reply, error) { return Reply{IsError: true, Text: RowOwnText}, nil })
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
