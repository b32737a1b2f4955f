package middleware_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// Example_recommendedOrder is the chain the package documentation
// recommends, outermost first: the audit row, the raw cause to the
// operator, the public envelope for the client, and Recover next to the
// handler.
func Example_recommendedOrder() {
	rows := audit.EmitterFunc(func(_ context.Context, r audit.Record) {
		fmt.Printf("audit: tool=%s outcome=%s message=%q\n", r.Tool, r.Outcome, r.Message)
	})
	report := func(_ context.Context, ev middleware.DiagnosticEvent) {
		fmt.Printf("operator: %s\n", ev.Cause())
	}
	chain := middleware.New(
		audit.Interceptor(rows),                 // one row per call, panics included
		middleware.Diagnostics(report),          // raw cause of unexpected failures to the operator
		middleware.Normalize(errs.Normalizer{}), // public envelope for the client
		middleware.Recover,                      // a panic becomes a failure, the server keeps running
	)
	h, err := chain.ThenFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		if req.Tool == "crash" {
			panic("secret: index out of range")
		}
		return toolctx.ErrorResult(errors.New("dial tcp 10.0.0.5:5432: connection refused"))
	})
	if err != nil {
		panic(err)
	}
	for _, tool := range []string{"report", "crash"} {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: tool})
		fmt.Printf("client: %s\n", res.Error.Message)
	}
	// Output:
	// operator: dial tcp 10.0.0.5:5432: connection refused
	// audit: tool=report outcome=error message="dial tcp 10.0.0.5:5432: connection refused"
	// client: internal error: the tool failed; the cause was recorded on the server
	// operator: panic: secret: index out of range
	// audit: tool=crash outcome=panic message="panic: secret: index out of range"
	// client: internal error: the tool failed; the cause was recorded on the server
}
