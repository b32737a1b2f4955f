package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/toolctx"
)

// The client is run against the demo server by examples/server's TestTour;
// this checks how it renders what it received.
func TestDescribe(t *testing.T) {
	ok := &mcp.CallToolResult{StructuredContent: map[string]any{"greeting": "hi"}}
	assert.Equal(t, `ok {"greeting":"hi"}`, Describe(ok, nil, false))

	fail := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: "order 42 does not exist"}},
		Meta:    mcp.Meta{toolctx.ErrorMetaKey: map[string]any{"code": "not_found", "detail": map[string]any{"id": 42}}},
	}
	assert.Equal(t, `isError "order 42 does not exist" code=not_found detail={"id":42}`, Describe(fail, nil, false))
	assert.Equal(t, "protocol error: boom", Describe(nil, errors.New("boom\nsecond line"), false))
	assert.Contains(t, Describe(nil, context.DeadlineExceeded, true), "cancelled by the client")
}

func TestUnreachable(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-url", "http://127.0.0.1:1/mcp", "-timeout", "5s"}, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "go run ./examples/server")
	assert.Equal(t, 2, run(context.Background(), []string{"-nope"}, &out, &errb))
}
