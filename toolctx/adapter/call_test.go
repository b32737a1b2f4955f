package adapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wire is what the test codec sends: the result's JSON, or a failure.
type wire struct {
	JSON    string
	Failure *errs.Public
}

// codec encodes a normalized result as JSON, counting its encodings.
type codec struct {
	cfg      *adapter.Config
	encoded  atomic.Int32
	progress []float64
	mu       sync.Mutex
}

func (c *codec) Encode(ctx context.Context, res *toolctx.CallResult) (wire, error) {
	c.encoded.Add(1)
	res = toolctx.Normalized(ctx, res, c.cfg.Normalizer)
	b, err := json.Marshal(map[string]any{"structured": res.StructuredContent, "isError": res.IsError, "error": res.Error})
	if err != nil {
		return wire{}, err
	}
	return wire{JSON: string(b)}, nil
}

func (c *codec) Failure(pub errs.Public) wire { return wire{Failure: &pub} }

func (c *codec) SendProgress(opts toolctx.ProgressOptions) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.progress = append(c.progress, opts.Progress)
	return nil
}

func (c *codec) SendLog(toolctx.LogOptions) error { return nil }

type fixture struct {
	cfg   *adapter.Config
	codec *codec
	logs  *bytes.Buffer
	logMu sync.Mutex
}

func newFixture() *fixture {
	f := &fixture{logs: new(bytes.Buffer)}
	cfg, err := adapter.NewConfig("toolmw/test", "test.New", adapter.WithFallbackLogger(slog.New(slog.NewTextHandler(lockedWriter{f}, nil))))
	if err != nil {
		panic(err)
	}
	f.cfg = cfg
	f.codec = &codec{cfg: f.cfg}
	return f
}

type lockedWriter struct{ f *fixture }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.f.logMu.Lock()
	defer w.f.logMu.Unlock()
	return w.f.logs.Write(p)
}

func (f *fixture) logged() string {
	f.logMu.Lock()
	defer f.logMu.Unlock()
	return f.logs.String()
}

func (f *fixture) serve(ctx context.Context, h toolctx.Handler) wire {
	c := &adapter.Call[wire]{}
	c.Request = toolctx.Request{Tool: "t", CallID: adapter.NewCallID()}
	return c.Serve(ctx, f.cfg, h, f.codec, f.codec)
}

const secret = "SECRET-dsn=postgres://app:hunter2@10.0.0.7"

// A panic or a runtime.Goexit that escapes the whole chain ends the call
// as the generic internal failure: the caller's goroutine goes on, and the
// fallback logger gets the value and the stack.
func TestServeContains(t *testing.T) {
	for name, h := range map[string]toolctx.HandlerFunc{
		"panic":  func(context.Context, *toolctx.Request) *toolctx.CallResult { panic(secret) },
		"goexit": func(context.Context, *toolctx.Request) *toolctx.CallResult { runtime.Goexit(); return nil },
		"encode panics": func(context.Context, *toolctx.Request) *toolctx.CallResult {
			return &toolctx.CallResult{StructuredContent: panicky{}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture()
			out := f.serve(context.Background(), h)
			require.NotNil(t, out.Failure, "a failure")
			assert.Equal(t, errs.CodeInternal, out.Failure.Code)
			assert.Equal(t, errs.GenericMessage, out.Failure.Message)
			want := secret
			if name == "goexit" {
				want = "Goexit"
			}
			assert.Contains(t, f.logged(), want, "the cause, server-side")
			assert.Contains(t, f.logged(), "goroutine", "with its stack")
		})
	}
}

// panicky's MarshalJSON panics: encoding the answer panics.
type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("marshal exploded " + secret) }

// A call whose context ended gets the content-free canceled result,
// whatever the handler returned late.
func TestServeCancelled(t *testing.T) {
	f := newFixture()
	ctx, cancel := context.WithCancel(context.Background())
	out := f.serve(ctx, toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		cancel()
		return toolctx.TextResult("late " + secret)
	}))
	require.NotNil(t, out.Failure)
	assert.Equal(t, errs.CodeCanceled, out.Failure.Code)
}

// unencodable is structured content that cannot be encoded; its
// MarshalJSON's error quotes the secret.
type unencodable struct{}

func (unencodable) MarshalJSON() ([]byte, error) { return nil, errors.New("driver: " + secret) }

// TestPostHandlerResultRow: a result an interceptor builds after the
// handler returned, which cannot be encoded, is audited as what the client
// gets (an internal failure naming the encoder's error), not as a
// success; the check and the answer share one encoding of each result.
// An unencodable result built outside every hook that checks is logged to
// the fallback logger (the rows are written by then).
func TestPostHandlerResultRow(t *testing.T) {
	var rows []toolctx.Outcome
	var causes []string
	after := middleware.After(func(_ context.Context, info middleware.CallInfo) {
		rows = append(rows, info.Outcome)
		if info.Cause() != nil {
			causes = append(causes, info.Cause().Error())
		}
	})
	replace := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			_ = next.CallTool(ctx, req)
			return &toolctx.CallResult{StructuredContent: unencodable{}}
		})
	}
	ok := toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("fine") })

	f := newFixture()
	out := f.serve(context.Background(), middleware.New(after, replace).Middleware()(ok))
	require.Nil(t, out.Failure, "the chain's own failure is sent")
	assert.JSONEq(t, `{"structured":null,"isError":true,"error":{"code":"internal","message":"`+errs.GenericMessage+`"}}`, out.JSON,
		"the client gets the generic failure")
	require.Len(t, rows, 1)
	assert.True(t, rows[0].Failed, "the row says the call failed: %+v", rows[0])
	assert.Equal(t, errs.CodeInternal, rows[0].Public.Code)
	require.Len(t, causes, 1)
	assert.ErrorContains(t, errors.New(causes[0]), secret, "the row names the cause")
	assert.ErrorContains(t, errors.New(causes[0]), adapter.ErrUnsendable.Error())
	assert.NotContains(t, f.logged(), "cannot be sent", "the hook saw it: nothing left to log")
	assert.Equal(t, int32(2), f.codec.encoded.Load(), "the bad result once, the failure the hook recorded once")

	// Outside the hook: the row cannot know, the fallback logger does.
	rows, causes = nil, nil
	f = newFixture()
	out = f.serve(context.Background(), middleware.New(replace, after).Middleware()(ok))
	require.NotNil(t, out.Failure)
	assert.Equal(t, errs.GenericMessage, out.Failure.Message)
	assert.Contains(t, f.logged(), "cannot be sent")
	assert.Contains(t, f.logged(), secret, "the fallback logger gets the cause")
}

// The call's Notifier sends in order, refuses a progress that does not
// increase, and sends nothing once the call has ended.
func TestNotifierGate(t *testing.T) {
	f := newFixture()
	var leaked context.Context
	f.serve(context.Background(), toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		require.NoError(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}))
		require.Error(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}), "progress must increase")
		require.NoError(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 2}))
		leaked = ctx
		return toolctx.TextResult("ok")
	}))
	require.ErrorIs(t, toolctx.Progress(leaked, toolctx.ProgressOptions{Progress: 3}), toolctx.ErrCallEnded)
	require.ErrorIs(t, toolctx.Log(leaked, toolctx.LogOptions{Data: "x"}), toolctx.ErrCallEnded)
	assert.Equal(t, []float64{1, 2}, f.codec.progress)
}

// Observe runs the chain for a call answered elsewhere: nothing is sent,
// and an escape is a failure.
func TestObserve(t *testing.T) {
	f := newFixture()
	c := &adapter.Call[wire]{}
	res := c.Observe(context.Background(), f.cfg, toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		require.ErrorIs(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}), toolctx.ErrCallEnded)
		panic(secret)
	}), nil)
	require.NotNil(t, errs.PanicOf(res.Cause()), "the escape is a panic failure")
}

// CodecFrom finds the codec of the call a chain runs for, through the
// contexts an interceptor derives, under Serve and under Observe (which
// checks no result with it); outside a call, and for a Call of another
// wire type, there is none.
func TestCodecFrom(t *testing.T) {
	f := newFixture()
	require.Nil(t, adapter.CodecFrom[wire](context.Background()))
	type key struct{}
	find := toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		ctx, cancel := context.WithCancel(context.WithValue(ctx, key{}, 1))
		defer cancel()
		assert.Same(t, f.codec, adapter.CodecFrom[wire](ctx))
		assert.Nil(t, adapter.CodecFrom[string](ctx))
		return toolctx.TextResult("ok")
	})
	f.serve(context.Background(), find)
	before := f.codec.encoded.Load()
	c := &adapter.Call[wire]{}
	res := c.Observe(context.Background(), f.cfg, toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		r := toolctx.TextResult("ok")
		assert.Same(t, r, adapter.Sendable(ctx, r), "Observe checks no result")
		return find.CallTool(ctx, req)
	}), f.codec)
	require.False(t, res.IsError)
	assert.Equal(t, before, f.codec.encoded.Load(), "Observe encodes nothing")
}

func TestNativeAndRegister(t *testing.T) {
	res := adapter.Native(func() *toolctx.CallResult { panic(secret) })
	require.NotNil(t, errs.PanicOf(res.Cause()))
	err := adapter.Register("the SDK", "t", func() { panic("taken") })
	var se *errs.ToolSchemaError
	require.ErrorAs(t, err, &se)
	require.NoError(t, adapter.Register("the SDK", "t", func() {}))
	_, err = adapter.Encode(unencodable{})
	require.ErrorContains(t, err, secret)
	deep := json.RawMessage(bytes.Repeat([]byte("["), adapter.MaxDepth+1))
	require.Error(t, adapter.CheckDepth(deep))
}
