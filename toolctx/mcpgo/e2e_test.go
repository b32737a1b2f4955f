package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpgo"
)

// TestBehaviourTable checks DESIGN.md's table row by row on each transport.
func TestBehaviourTable(t *testing.T) {
	for name, mk := range wires(t) {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			w := mk(t, rec)

			t.Run("success passes through losslessly", func(t *testing.T) {
				for _, tool := range []string{"rich", "tm_rich"} {
					rec.reset()
					res, err := call(t, w, tool, nil)
					require.NoError(t, err)
					assert.False(t, res.IsError)
					want := richResult()
					gotContent, _ := json.Marshal(res.Content)
					wantContent, _ := json.Marshal(want.Content)
					assert.JSONEq(t, string(wantContent), string(gotContent), tool)
					gotSC, _ := json.Marshal(res.StructuredContent)
					assert.JSONEq(t, `{"answer":42,"list":["x","y"]}`, string(gotSC))
					require.NotNil(t, res.Meta)
					assert.Equal(t, "abc", res.Meta.AdditionalFields["trace"])
					assert.EqualValues(t, 1, res.Meta.AdditionalFields["n"])
					diags, rows, reqs := rec.snapshot()
					assert.Empty(t, diags)
					require.Len(t, rows, 1)
					assert.False(t, rows[0].Outcome.Failed)
					require.Len(t, reqs, 1)
					assert.Equal(t, tool, reqs[0].Tool)
					assert.NotEmpty(t, reqs[0].CallID)
					if name == "in-process" {
						assert.NotEmpty(t, reqs[0].SessionID)
						assert.Equal(t, toolctx.TransportInMemory, reqs[0].Transport)
						assert.Nil(t, reqs[0].Header)
					} else {
						// Protocol 2026-07-28 (mcp-go's default) is
						// stateless: no session id.
						assert.Equal(t, toolctx.TransportStreamableHTTP, reqs[0].Transport)
						assert.NotEmpty(t, reqs[0].Header.Get("Content-Type"))
					}
				}
			})

			t.Run("unknown tool is a protocol error", func(t *testing.T) {
				rec.reset()
				_, err := call(t, w, "no_such_tool", nil)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "not found")
				diags, rows, _ := rec.snapshot()
				assert.Empty(t, diags, "an unknown tool is an expected rejection")
				require.Len(t, rows, 1, "the hooks run the chain for a call mcp-go rejects before the tool middleware")
				assert.Equal(t, errs.CodeUnknownTool, rows[0].Outcome.Public.Code)
				assert.Equal(t, `unknown tool "no_such_tool"`, rows[0].Outcome.Public.Message)
				assert.False(t, rows[0].Outcome.Scrubbed)
			})

			t.Run("invalid arguments give the validator's public feedback", func(t *testing.T) {
				rec.reset()
				res, err := call(t, w, "strict", map[string]any{"n": "not a number"})
				require.NoError(t, err)
				assert.True(t, res.IsError)
				assert.Contains(t, text(res), "n")
				diags, rows, _ := rec.snapshot()
				assert.Empty(t, diags)
				require.Len(t, rows, 1, "the hooks run the chain for a call mcp-go rejects before the tool middleware")
				assert.Equal(t, errs.CodeInvalidArguments, rows[0].Outcome.Public.Code)
				assert.Equal(t, text(res), rows[0].Outcome.Public.Message)
				assert.False(t, rows[0].Outcome.Scrubbed)
			})

			t.Run("explicit public error", func(t *testing.T) {
				for _, tool := range []string{"fail_a", "tm_fail"} {
					rec.reset()
					res, err := call(t, w, tool, map[string]any{"kind": 3, "canary": "SECRET-PUBLIC"})
					require.NoError(t, err)
					assert.True(t, res.IsError)
					assert.Equal(t, "no such record", text(res))
					assert.Nil(t, res.StructuredContent)
					assert.Equal(t, map[string]any{"code": "not_found"}, errorMeta(res))
					diags, rows, _ := rec.snapshot()
					assert.Empty(t, diags)
					require.Len(t, rows, 1)
					assert.Equal(t, errs.CodeNotFound, rows[0].Outcome.Public.Code)
					assert.False(t, rows[0].Outcome.Scrubbed)
				}
			})

			t.Run("public detail reaches the client", func(t *testing.T) {
				rec.reset()
				res, err := call(t, w, "guarded", nil)
				require.NoError(t, err)
				assert.True(t, res.IsError)
				assert.Equal(t, "the scope tools:guarded is required", text(res))
				assert.Equal(t, "permission_denied", errorMeta(res)["code"])
				diags, rows, _ := rec.snapshot()
				assert.Empty(t, diags, "a guard's rejection is expected")
				require.Len(t, rows, 1)
				assert.Equal(t, errs.CodePermissionDenied, rows[0].Outcome.Public.Code)
			})

			t.Run("handler's own isError result", func(t *testing.T) {
				rec.reset()
				res, err := call(t, w, "own_error", nil)
				require.NoError(t, err)
				assert.True(t, res.IsError)
				assert.Equal(t, "the date must be in the future", text(res))
				assert.Equal(t, "tool_error", errorMeta(res)["code"])
				diags, rows, _ := rec.snapshot()
				assert.Empty(t, diags)
				require.Len(t, rows, 1)
				assert.Equal(t, errs.CodeToolError, rows[0].Outcome.Public.Code)
			})

			t.Run("raw error and panic are scrubbed, kept on the server", func(t *testing.T) {
				for _, tool := range []string{"fail_b", "tm_fail"} {
					for kind := 0; kind < numKinds; kind++ {
						if publicKind(kind) {
							continue
						}
						rec.reset()
						canary := fmt.Sprintf("CANARY-%s-%d", tool, kind)
						res, err := call(t, w, tool, map[string]any{"kind": kind, "canary": canary})
						require.NoError(t, err, "kind %d", kind)
						assert.True(t, res.IsError)
						assert.Equal(t, errs.GenericMessage, text(res))
						assert.Nil(t, res.StructuredContent)
						assert.Equal(t, map[string]any{"code": "internal"}, errorMeta(res))
						diags, rows, _ := rec.snapshot()
						require.Len(t, diags, 1, "kind %d", kind)
						require.Len(t, rows, 1)
						assert.True(t, rows[0].Outcome.Scrubbed)
						assert.Equal(t, errs.CodeInternal, rows[0].Outcome.Public.Code)
						if kind >= 4 && kind <= 8 {
							var pe *errs.PanicError
							require.ErrorAs(t, diags[0].Cause(), &pe)
							assert.NotEmpty(t, pe.Stack)
							assert.NotContains(t, rows[0].Cause().Error(), "goroutine ", "no stack in the audit row")
						}
						if canaryInValue(kind) {
							assert.Contains(t, diags[0].Cause().Error(), canary)
							assert.Contains(t, rows[0].Cause().Error(), canary)
						}
						if kind == 8 {
							var re runtime.Error
							assert.ErrorAs(t, diags[0].Cause(), &re)
						}
					}
				}
				// The server keeps running.
				res, err := call(t, w, "ok", nil)
				require.NoError(t, err)
				assert.Equal(t, "hello", text(res))
			})

			t.Run("output that cannot be encoded", func(t *testing.T) {
				rec.reset()
				res, err := call(t, w, "tm_unencodable", nil)
				require.NoError(t, err)
				assert.True(t, res.IsError)
				assert.Equal(t, errs.GenericMessage, text(res))
				diags, _, _ := rec.snapshot()
				require.Len(t, diags, 1)
				assert.Contains(t, diags[0].Cause().Error(), "chan")
			})

			assert.NotContains(t, string(w.bytes()), "CANARY")
			assert.NotContains(t, string(w.bytes()), "SECRET")
		})
	}
}

// TestCanary runs ≥1,000 generated failures per transport (in-process,
// streamable HTTP, SSE, stdio), concurrently, and
// checks that no byte the client receives holds a canary while the
// diagnostics events and After records of the scrubbed failures do.
func TestCanary(t *testing.T) {
	const calls = 1200
	for name, mk := range everyWire(t) {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			w := mk(t, rec)
			tools := []string{"fail_a", "fail_b", "fail_c", "tm_fail"}
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			type job struct {
				tool, canary string
				kind         int
			}
			jobs := make([]job, calls)
			rng := rand.New(rand.NewPCG(seed, 7))
			for i := range jobs {
				jobs[i] = job{tool: tools[rng.IntN(len(tools))], kind: rng.IntN(numKinds),
					canary: fmt.Sprintf("CANARY%016x%d", rng.Uint64(), i)}
			}
			var wg sync.WaitGroup
			ch := make(chan job)
			var failures sync.Map
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := range ch {
						res, err := call(t, w, j.tool, map[string]any{"kind": j.kind, "canary": j.canary})
						if err != nil || !res.IsError {
							failures.Store(j.canary, fmt.Sprintf("%v %+v", err, res))
						}
					}
				}()
			}
			for _, j := range jobs {
				ch <- j
			}
			close(ch)
			wg.Wait()
			failures.Range(func(k, v any) bool {
				t.Errorf("call %v: %v", k, v)
				return true
			})

			raw := w.bytes()
			require.NotEmpty(t, raw)
			if i := bytes.Index(raw, []byte("CANARY")); i >= 0 {
				t.Fatalf("the client received a canary: %q", raw[max(0, i-200):min(len(raw), i+100)])
			}
			diags, rows, _ := rec.snapshot()
			require.Len(t, rows, calls)
			diagText := make(map[string]bool, len(diags))
			for _, d := range diags {
				diagText[d.Cause().Error()] = true
			}
			rowCause := make(map[string]bool, len(rows))
			for _, r := range rows {
				if r.Outcome.Scrubbed {
					rowCause[r.Cause().Error()] = true
				}
			}
			contains := func(set map[string]bool, canary string) bool {
				for s := range set {
					if strings.Contains(s, canary) {
						return true
					}
				}
				return false
			}
			scrubbed := 0
			for _, j := range jobs {
				if publicKind(j.kind) {
					continue
				}
				scrubbed++
				if canaryInValue(j.kind) {
					assert.True(t, contains(diagText, j.canary), "diagnostics miss %s (kind %d)", j.canary, j.kind)
					assert.True(t, contains(rowCause, j.canary), "rows miss %s (kind %d)", j.canary, j.kind)
				}
			}
			assert.Len(t, diags, scrubbed)
		})
	}
}

// TestWithoutToolmwRecoveryLeaks documents the problem the adapter fixes:
// with mcp-go's own WithRecovery, the panic value reaches the client in a
// JSON-RPC -32603 message, and so does a returned error's text.
func TestWithoutToolmwRecoveryLeaks(t *testing.T) {
	s := server.NewMCPServer("bare", "1.0.0", server.WithRecovery())
	s.AddTool(mcp.NewTool("boom"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("CANARY-postgres://admin:hunter2@db")
	})
	s.AddTool(mcp.NewTool("err"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("CANARY-open /etc/secret: permission denied")
	})
	w := inProcessWire(t, s)
	_, err := call(t, w, "boom", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CANARY-postgres://admin:hunter2@db")
	_, err = call(t, w, "err", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CANARY-open /etc/secret")
	assert.Contains(t, string(w.bytes()), "-32603")
}

// TestRecoveryInsideAdapterIsScrubbed: mcp-go's WithRecovery placed inside
// the adapter turns the panic into an error holding the value; the adapter
// scrubs it like any raw error.
func TestRecoveryInsideAdapterIsScrubbed(t *testing.T) {
	rec := &recorder{}
	s := newServer(t, rec, server.WithRecovery())
	w := inProcessWire(t, s)
	res, err := call(t, w, "fail_a", map[string]any{"kind": 4, "canary": "CANARY-x"})
	require.NoError(t, err)
	assert.Equal(t, errs.GenericMessage, text(res))
	diags, _, _ := rec.snapshot()
	require.Len(t, diags, 1)
	assert.Contains(t, diags[0].Cause().Error(), "panic recovered in fail_a tool handler: CANARY-x")
	assert.NotContains(t, string(w.bytes()), "CANARY")
}

// TestCancellation: a client that cancels gets no late raw response and no
// diagnostics event is emitted.
func TestCancellation(t *testing.T) {
	for name, mk := range wires(t) {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			w := mk(t, rec)
			canary := "CANARY-cancel-" + name
			started := make(chan struct{})
			slowStarted.Store(canary, started)
			ctx, cancel := context.WithCancel(context.Background())
			type out struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan out, 1)
			go func() {
				req := mcp.CallToolRequest{}
				req.Params.Name = "slow"
				req.Params.Arguments = map[string]any{"canary": canary}
				res, err := w.client.CallTool(ctx, req)
				done <- out{res, err}
			}()
			<-started
			cancel()
			o := <-done
			// Wait for the server side to finish the call.
			require.Eventually(t, func() bool { _, rows, _ := rec.snapshot(); return len(rows) == 1 }, time.Minute, 5*time.Millisecond)
			diags, rows, _ := rec.snapshot()
			assert.Empty(t, diags, "no diagnostics after cancellation")
			assert.Equal(t, errs.CodeCanceled, rows[0].Outcome.Public.Code)
			switch name {
			case "streamable-http":
				assert.Error(t, o.err, "the cancelled HTTP client gets no response")
			case "in-process":
				// The in-process transport is synchronous: mcp-go hands the
				// client the response even after cancellation. It is the
				// public "canceled" result, never the raw late failure.
				if o.err == nil {
					assert.Equal(t, "canceled", errorMeta(o.res)["code"])
				}
			}
			time.Sleep(50 * time.Millisecond)
			assert.NotContains(t, string(w.bytes()), "CANARY")
		})
	}
}

// TestTransportAndSessionFill checks the Request fields on stdio-less
// transports: in-memory detection, CallID uniqueness, _meta.
func TestRequestFill(t *testing.T) {
	rec := &recorder{}
	s := newServer(t, rec)
	w := &wire{name: "in-process"}
	w.client = client.NewClient(&captureTransport{Interface: transport.NewInProcessTransport(s), w: w})
	initialize(t, w.client)
	defer w.client.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = "ok"
	req.Params.Meta = &mcp.Meta{ProgressToken: "p1", AdditionalFields: map[string]any{"client/key": "v"}}
	_, err := w.client.CallTool(context.Background(), req)
	require.NoError(t, err)
	_, err = call(t, w, "ok", nil)
	require.NoError(t, err)
	_, _, reqs := rec.snapshot()
	require.Len(t, reqs, 2)
	assert.Equal(t, toolctx.TransportInMemory, reqs[0].Transport)
	assert.Equal(t, "v", reqs[0].Meta["client/key"])
	assert.Equal(t, "p1", reqs[0].Meta["progressToken"])
	assert.Equal(t, map[string]any{"client/key": "v", "progressToken": "p1"}, toolctx.DetailsOf(&reqs[0]).Meta(),
		"hooks see the client's own keys, without the protocol's")
	assert.Equal(t, "2026-07-28", reqs[0].Meta[toolctx.ReservedMetaPrefix+"protocolVersion"], "the Request has the _meta as sent")
	assert.NotEqual(t, reqs[0].CallID, reqs[1].CallID)
	assert.Nil(t, reqs[0].Header)
	assert.Nil(t, reqs[0].Identity)
}

// TestAddToolWithoutAdapter: a toolmw Handler registered on a server without
// the adapter is still safe: panics are recovered and raw errors scrubbed.
func TestAddToolWithoutAdapter(t *testing.T) {
	s := server.NewMCPServer("plain", "1.0.0")
	require.NoError(t, mcpgo.AddTool(s, mcp.NewTool("tm", failSchema), toolctx.HandlerFunc(
		func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			var in struct {
				Kind   int    `json:"kind"`
				Canary string `json:"canary"`
			}
			_ = json.Unmarshal(req.Arguments.JSON(), &in)
			return toolctx.ErrorResult(failure(in.Kind, in.Canary))
		})))
	w := inProcessWire(t, s)
	for kind := 0; kind < numKinds; kind++ {
		res, err := call(t, w, "tm", map[string]any{"kind": kind, "canary": "CANARY-plain"})
		require.NoError(t, err)
		assert.True(t, res.IsError)
	}
	assert.NotContains(t, string(w.bytes()), "CANARY")
	assert.ErrorIs(t, mcpgo.AddTool(s, mcp.NewTool("x"), nil), toolctx.ErrNilHandler)
}

// TestTransportDetected checks that a toolmw handler's Request and the
// After row name the transport of mcp-go's SSE and stdio servers, with the
// session id (the adapter reads them from the session's type; there is no
// WithTransport here).
func TestTransportDetected(t *testing.T) {
	cases := map[string]struct {
		mk   func(*testing.T, *recorder) *wire
		want toolctx.Transport
	}{
		"sse":   {func(t *testing.T, rec *recorder) *wire { return sseWire(t, newServer(t, rec)) }, toolctx.TransportSSE},
		"stdio": {func(t *testing.T, rec *recorder) *wire { return stdioWire(t, newServer(t, rec)) }, toolctx.TransportStdio},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			w := tc.mk(t, rec)
			res, err := call(t, w, "tm_rich", nil)
			require.NoError(t, err, "the call")
			require.False(t, res.IsError, "the call succeeds")
			_, rows, reqs := rec.snapshot()
			require.Len(t, reqs, 1, "the handler saw one Request")
			assert.Equal(t, tc.want, reqs[0].Transport, "the Request's transport")
			assert.NotEmpty(t, reqs[0].SessionID, "the Request's session id")
			require.Len(t, rows, 1, "one After row")
			assert.Equal(t, tc.want, rows[0].Details.Transport(), "the After row's transport")
			assert.Equal(t, reqs[0].SessionID, rows[0].Details.SessionID(), "the After row's session id")
		})
	}
}
