package redisstore

import (
	"context"
	"encoding/json"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

type toolctxHandler = toolctx.Handler

// okHandler is m around a handler that succeeds.
func okHandler(m toolctx.Middleware) toolctx.Handler {
	return m(toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("ok")
	}))
}

func request(subject string) *toolctx.Request {
	return &toolctx.Request{Tool: "search", Identity: &toolctx.Identity{Subject: subject}}
}

func normalized(res *toolctx.CallResult) *toolctx.CallResult {
	return toolctx.Normalized(context.Background(), res, errs.Normalizer{})
}

type jsonRaw = json.RawMessage
type jsonNumber = json.Number
