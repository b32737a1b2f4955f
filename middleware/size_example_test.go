package middleware_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleMaxArgBytes() {
	h, _ := middleware.New(middleware.Normalize(errs.Normalizer{}), middleware.MaxArgBytes(32)).
		ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("ok") })
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "search", Arguments: toolctx.RawArguments([]byte(`{"q":"` + strings.Repeat("x", 40) + `"}`))})
	fmt.Println(res.Error.Code, res.Error.Message, res.Error.Detail)
	// Output:
	// invalid_arguments the arguments are larger than the server allows map[got_bytes:48 max_bytes:32]
}

func ExampleMaxResultBytes() {
	logs := func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult(strings.Repeat("log line\n", 100)) // 900 bytes, 1002 as JSON (\n is two)
	}
	chain := middleware.New(middleware.Normalize(errs.Normalizer{}))

	// Reject: the client gets a public error with the limit.
	h, _ := chain.Append(middleware.MaxResultBytes(512, middleware.ResultReject)).ThenFunc(logs)
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "logs"})
	fmt.Println(res.Error.Code, res.Error.Detail)
	fmt.Println(res.Notes()) // for the audit row

	// Truncate: the client gets the start of the text and a marker.
	h, _ = chain.Append(middleware.MaxResultBytes(512, middleware.ResultTruncate)).ThenFunc(logs)
	res = h.CallTool(context.Background(), &toolctx.Request{Tool: "logs"})
	text := res.Content[0].(*toolctx.Text).Text
	fmt.Println(res.IsError, strings.HasSuffix(text, "\n[truncated by the server: the result was 1002 bytes, over its limit]"))
	fmt.Println(res.Notes())
	// Output:
	// result_too_large map[max_bytes:512]
	// [{result_bytes 1002}]
	// false true
	// [{truncated_from_bytes 1002}]
}
