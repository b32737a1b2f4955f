package middleware_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// say returns an interceptor that prints its name on the way in and out.
func say(name string) toolctx.Middleware {
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			fmt.Println("enter", name)
			defer fmt.Println("leave", name)
			return next.CallTool(ctx, req)
		})
	}
}

func ExampleChain() {
	h, err := middleware.New(say("m1"), say("m2"), say("m3")).ThenFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			fmt.Println("handler", req.Tool)
			return toolctx.TextResult("ok")
		})
	if err != nil {
		panic(err)
	}
	h.CallTool(context.Background(), &toolctx.Request{Tool: "echo"})
	// Output:
	// enter m1
	// enter m2
	// enter m3
	// handler echo
	// leave m3
	// leave m2
	// leave m1
}

func ExampleRecover() {
	h := middleware.Recover(toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		var m map[string]int
		//lint:ignore SA5000 the nil-map write is the deliberate panic under test
		m["boom"]++ // panics: assignment to entry in nil map
		return nil
	}))
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "counter"})

	var pe *errs.PanicError
	fmt.Println("failed:", res.IsError)
	fmt.Println("panic kept for the server:", errors.As(res.Cause(), &pe), pe.Error())
	fmt.Println("stack kept:", len(pe.Stack) > 0)

	res = toolctx.Normalized(context.Background(), res, errs.Normalizer{})
	fmt.Println("client sees:", res.Error.Message)
	// Output:
	// failed: true
	// panic kept for the server: true panic: assignment to entry in nil map
	// stack kept: true
	// client sees: internal error: the tool failed; the cause was recorded on the server
}

func ExampleNormalize() {
	n := errs.Normalizer{Map: func(err error) *errs.Error {
		if errors.Is(err, sql.ErrNoRows) {
			return errs.NotFound("no such customer")
		}
		return nil
	}}
	h, _ := middleware.New(middleware.Normalize(n), middleware.Recover).ThenFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if req.Tool == "find" {
				return toolctx.ErrorResult(fmt.Errorf("select customer 42: %w", sql.ErrNoRows))
			}
			return toolctx.ErrorResult(errors.New("dial tcp 10.0.0.5:5432: connection refused"))
		})
	for _, tool := range []string{"find", "report"} {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: tool})
		fmt.Printf("%s: %s | %s | scrubbed=%v\n", tool, res.Error.Code, res.Error.Message, res.Scrubbed())
		fmt.Printf("%s: server keeps %q\n", tool, res.Cause())
	}
	// Output:
	// find: not_found | no such customer | scrubbed=false
	// find: server keeps "select customer 42: sql: no rows in result set"
	// report: internal | internal error: the tool failed; the cause was recorded on the server | scrubbed=true
	// report: server keeps "dial tcp 10.0.0.5:5432: connection refused"
}

func ExampleDiagnostics() {
	diag := middleware.Diagnostics(func(ctx context.Context, ev middleware.DiagnosticEvent) {
		// Send ev to logs, traces or an error tracker; never to the client.
		fmt.Printf("diagnostic: tool=%s code=%s err=%q stack=%v\n", ev.Details.Tool(), ev.Code, errs.Describe(ev.Cause()), errs.PanicOf(ev.Cause()) != nil)
	})
	h, _ := middleware.New(diag, middleware.Normalize(errs.Normalizer{}), middleware.Recover).ThenFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			switch req.Tool {
			case "lookup":
				return toolctx.ErrorResult(errs.NotFound("no such user")) // public: no diagnostic
			case "crash":
				panic("index out of range")
			}
			return toolctx.ErrorResult(errors.New("open /etc/app/secret.key: permission denied"))
		})
	for _, tool := range []string{"lookup", "read", "crash"} {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: tool})
		fmt.Printf("client: %s %s\n", res.Error.Code, res.Error.Message)
	}
	// Output:
	// client: not_found no such user
	// diagnostic: tool=read code=internal err="open /etc/app/secret.key: permission denied" stack=false
	// client: internal internal error: the tool failed; the cause was recorded on the server
	// diagnostic: tool=crash code=internal err="panic: index out of range" stack=true
	// client: internal internal error: the tool failed; the cause was recorded on the server
}

func ExampleAfter() {
	audit := middleware.After(func(ctx context.Context, info middleware.CallInfo) {
		// A real hook hands info to a queue; it must not block the call.
		if !info.Outcome.Failed {
			fmt.Printf("tool=%s ok\n", info.Details.Tool())
			return
		}
		raw := ""
		if info.Outcome.Scrubbed {
			raw = info.Cause().Error() // the audit row may name the cause
		}
		fmt.Printf("tool=%s code=%s raw=%q\n", info.Details.Tool(), info.Outcome.Public.Code, raw)
	})
	h, _ := middleware.New(audit, middleware.Normalize(errs.Normalizer{}), middleware.Recover).ThenFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			switch req.Tool {
			case "missing":
				return toolctx.ErrorResult(errs.NotFound("no such file"))
			case "broken":
				return toolctx.ErrorResult(errors.New("open /srv/data: input/output error"))
			}
			return toolctx.TextResult("done")
		})
	for _, tool := range []string{"ok", "missing", "broken"} {
		h.CallTool(context.Background(), &toolctx.Request{Tool: tool})
	}
	// Output:
	// tool=ok ok
	// tool=missing code=not_found raw=""
	// tool=broken code=internal raw="open /srv/data: input/output error"
}

func ExampleWhen() {
	slowTools := middleware.When(middleware.Tools("search"), middleware.Timeout(10*time.Millisecond))
	h, _ := middleware.New(middleware.Normalize(errs.Normalizer{}), slowTools).ThenFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if _, ok := ctx.Deadline(); ok {
				<-ctx.Done() // honour the deadline
				return toolctx.ErrorResult(ctx.Err())
			}
			return toolctx.TextResult("no deadline for " + req.Tool)
		})
	for _, tool := range []string{"search", "echo"} {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: tool})
		if res.IsError {
			fmt.Println(tool+":", res.Error.Code, res.Error.Message)
		} else {
			fmt.Println(tool+":", res.Content[0].(*toolctx.Text).Text)
		}
	}
	// Output:
	// search: timeout the tool call timed out after 10ms
	// echo: no deadline for echo
}
