package middleware_test

import (
	"context"
	"fmt"
	"time"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleCache() {
	runs := 0
	forecast := func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
		runs++
		return toolctx.TextResult("sunny in " + string(req.Arguments.JSON()))
	}
	// forecast is read-only and idempotent: its answer may be reused for a minute.
	h, _ := middleware.New(
		middleware.When(middleware.Tools("forecast"), middleware.Cache(middleware.CacheConfig{TTL: time.Minute})),
	).ThenFunc(forecast)

	alice := &toolctx.Identity{Subject: "alice"}
	for _, args := range []string{`{"city":"Oslo","days":2}`, `{"days":2, "city":"Oslo"}`} {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: "forecast", Arguments: toolctx.RawArguments([]byte(args)), Identity: alice})
		fmt.Println(res.Content[0].(*toolctx.Text).Text, res.Notes())
	}
	fmt.Println("runs:", runs)
	// Output:
	// sunny in {"city":"Oslo","days":2} [{cache miss}]
	// sunny in {"city":"Oslo","days":2} [{cache hit}]
	// runs: 1
}
