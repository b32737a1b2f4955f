package toolctx_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleTyped() {
	type In struct {
		City string `json:"city"`
	}
	type Out struct {
		Forecast string `json:"forecast"`
	}
	h := toolctx.Typed(func(ctx context.Context, req *toolctx.Request, in In) (Out, error) {
		if in.City == "" {
			return Out{}, errs.InvalidArguments("city is required")
		}
		return Out{Forecast: "sunny in " + in.City}, nil
	})

	ok := h.CallTool(context.Background(), &toolctx.Request{Tool: "weather", Arguments: toolctx.RawArguments(json.RawMessage(`{"city":"Paris"}`))})
	fmt.Println(ok.IsError, ok.Content[0].(*toolctx.Text).Text)

	bad := h.CallTool(context.Background(), &toolctx.Request{Tool: "weather", Arguments: toolctx.RawArguments(json.RawMessage(`{"city":42}`))})
	bad = toolctx.Normalized(context.Background(), bad, errs.Normalizer{})
	fmt.Println(bad.IsError, bad.Error.Code, "|", bad.Error.Message)
	// Output:
	// false {"forecast":"sunny in Paris"}
	// true invalid_arguments | invalid arguments: city: expected a string, got a number
}

// An interceptor of the user's own that counts failures by code classifies
// each result as the caller will see it, whether or not Normalize has run
// yet: Classify is what toolmw's own hooks use.
func ExampleClassify() {
	counts := map[errs.Code]int{}
	count := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			res := next.CallTool(ctx, req)
			if o := toolctx.Classify(ctx, res, errs.Normalizer{}); o.Failed {
				counts[o.Public.Code]++
			}
			return res
		})
	}
	h := count(toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		if req.Tool == "lookup" {
			return toolctx.ErrorResult(errs.NotFound("no such invoice"))
		}
		return toolctx.ErrorResult(fmt.Errorf("dial tcp 10.0.0.5:5432: connection refused"))
	}))
	h.CallTool(context.Background(), &toolctx.Request{Tool: "lookup"})
	h.CallTool(context.Background(), &toolctx.Request{Tool: "report"})
	fmt.Println(counts[errs.CodeNotFound], counts[errs.CodeInternal])
	// Output:
	// 1 1
}

// An interceptor that replaces a raw failure with a public one of its own
// (a circuit breaker that tells the caller "unavailable") keeps the raw
// cause for the audit row with ScrubbedResult.
func ExampleScrubbedResult() {
	breaker := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			res := next.CallTool(ctx, req)
			if toolctx.Classify(ctx, res, errs.Normalizer{}).Scrubbed {
				return toolctx.ScrubbedResult(errs.Unavailable("the invoice store is down; retry later").Public(), res.Cause())
			}
			return res
		})
	}
	h := breaker(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(fmt.Errorf("dial tcp 10.0.0.5:5432: connection refused"))
	}))
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "lookup"})
	fmt.Println(res.Error.Code, "|", res.Error.Message)
	fmt.Println("row:", res.Scrubbed(), res.Cause())
	// Output:
	// unavailable | the invoice store is down; retry later
	// row: true dial tcp 10.0.0.5:5432: connection refused
}

// Code that sends a result anywhere (an adapter of the user's own, a test
// of what the client receives) normalizes it first: public fields only.
func ExampleNormalized() {
	raw := toolctx.ErrorResult(fmt.Errorf("pq: password authentication failed for user %q", "admin"))
	out := toolctx.Normalized(context.Background(), raw, errs.Normalizer{})
	b, _ := json.Marshal(out.Error)
	fmt.Println(out.IsError, string(b))
	// Output:
	// true {"code":"internal","message":"internal error: the tool failed; the cause was recorded on the server"}
}
