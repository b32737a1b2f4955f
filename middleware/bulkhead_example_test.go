package middleware_test

import (
	"context"
	"fmt"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleBulkhead() {
	// At most one export at a time; the next is turned away at once.
	entered, release := make(chan struct{}), make(chan struct{})
	h, _ := middleware.New(
		middleware.Normalize(errs.Normalizer{}),
		middleware.When(middleware.Tools("export"), middleware.Bulkhead(middleware.BulkheadConfig{Limit: 1})),
	).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		entered <- struct{}{}
		<-release
		return toolctx.TextResult("exported")
	})
	done := make(chan *toolctx.CallResult)
	go func() { done <- h.CallTool(context.Background(), &toolctx.Request{Tool: "export"}) }()
	<-entered

	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "export"})
	fmt.Println(res.Error.Code, res.Error.Message, res.Error.Detail)
	close(release)
	fmt.Println((<-done).IsError)
	// Output:
	// unavailable too many calls in flight: retry after 1s map[max_in_flight:1 retry_after_ms:1000]
	// false
}
