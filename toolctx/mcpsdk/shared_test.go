package mcpsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// sharedShifting is one error value returned by many calls at once; its
// text changes on every call.
type sharedShifting struct{ n atomic.Int64 }

func (e *sharedShifting) Error() string { return fmt.Sprintf("attempt %d: %s", e.n.Add(1), canary) }

// TestSharedValuesConcurrently: the same error values, public error (its
// detail holding a raw error) and result are returned by many calls at
// once, through toolmw and native tools: no call leaks, every call gets
// its row, and -race finds nothing.
func TestSharedValuesConcurrently(t *testing.T) {
	shifting := &sharedShifting{}
	public := errs.NotFound("no such report").WithCause(errors.New(canary)).
		WithDetail(map[string]any{"error": &fs.PathError{Op: "open", Path: canary, Err: fs.ErrNotExist}})
	sharedResult := toolctx.ErrorResult(shifting)
	handEnvelope := &toolctx.CallResult{IsError: true, Error: &errs.Public{Code: errs.CodeNotFound, Message: "gone",
		Detail: map[string]any{"e": &fs.PathError{Path: canary}}},
		StructuredContent: map[string]any{"cause": canary}, Meta: map[string]any{"cause": canary},
		Content: []toolctx.Content{&toolctx.Text{Text: "gone", Meta: map[string]any{"cause": canary}}}}
	s := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	for name, res := range map[string]*toolctx.CallResult{"raw": toolctx.ErrorResult(shifting), "public": toolctx.ErrorResult(public), "result": sharedResult, "envelope": handEnvelope} {
		require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "tm_" + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return res })))
	}
	s.AddTool(&mcp.Tool{Name: "native_raw", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, shifting
	})
	mcp.AddTool(s, &mcp.Tool{Name: "native_typed"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, public
	})
	rows := &rowLog{}
	chain := middleware.New(audit.Interceptor(rows), middleware.Diagnostics(func(context.Context, middleware.DiagnosticEvent) {}),
		middleware.Normalize(errs.Normalizer{}), middleware.Recover)
	mcpsdk.Install(s, chain.Middleware())
	cs := connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tools := []string{"tm_raw", "tm_public", "tm_result", "tm_envelope", "native_raw", "native_typed"}
	const workers, each = 8, 12
	var wg sync.WaitGroup
	errc := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				tool := tools[(w+i)%len(tools)]
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
				if err != nil {
					errc <- fmt.Errorf("%s: %w", tool, err)
					continue
				}
				if !res.IsError {
					errc <- fmt.Errorf("%s: not a failure", tool)
				}
				if b, _ := json.Marshal(res); strings.Contains(string(b), canary) {
					errc <- fmt.Errorf("%s: the canary reached the client: %s", tool, b)
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		assert.NoError(t, err)
	}
	assert.Len(t, rows.take(), workers*each, "every call has its row")
}
