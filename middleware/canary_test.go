package middleware_test

// The canary property: whatever shape a raw error takes, its text never
// reaches a public field of the result, nor its fmt, slog or JSON
// rendering, while the server side (Cause, the Diagnostics event, the After
// hook) still carries it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/syncbuf"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolmwtest/shapes"
)

const canaryPrefix = shapes.Prefix

func newCanary(r *rand.Rand) string { return shapes.NewCanary(r) }

// canaryChain is the recommended chain with recorders on both hooks.
type canaryChain struct {
	h     toolctx.Handler
	diag  *diagRecorder
	after *afterRecorder
	log   *syncbuf.Buffer
}

func newCanaryChain(t *testing.T, handler toolctx.Handler) canaryChain {
	logger, buf := bufLogger()
	c := canaryChain{diag: &diagRecorder{}, after: &afterRecorder{}, log: buf}
	c.h = mustThen(t, middleware.New(
		middleware.After(c.after.fn, middleware.WithFallbackLogger(logger)),
		middleware.Diagnostics(c.diag.fn, middleware.WithFallbackLogger(logger)),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
	), handler)
	return c
}

// publicRenderings returns every way the result may leave the process or
// reach a log line.
func publicRenderings(t *testing.T, res *toolctx.CallResult) map[string]string {
	out := map[string]string{}
	for _, c := range res.Content {
		if txt, ok := c.(*toolctx.Text); ok {
			out["content text"] += txt.Text + "\n"
		}
	}
	sc, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err, "structured content encodes")
	out["structured content"] = string(sc)
	meta, err := json.Marshal(res.Meta)
	require.NoError(t, err, "meta encodes")
	out["meta"] = string(meta)
	if res.Error != nil {
		out["error message"] = res.Error.Message
		detail, err := json.Marshal(res.Error.Detail)
		require.NoError(t, err, "detail encodes")
		out["error detail"] = string(detail)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out["fmt "+verb+" pointer"] = fmt.Sprintf(verb, res)
		out["fmt "+verb+" value"] = fmt.Sprintf(verb, *res)
	}
	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("result", "result", res, "value", *res)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("result", "result", res, "value", *res)
	out["slog text"] = text.String()
	out["slog json"] = js.String()
	b, err := json.Marshal(res)
	require.NoError(t, err, "the result encodes")
	out["json pointer"] = string(b)
	b, err = json.Marshal(*res)
	require.NoError(t, err, "the result value encodes")
	out["json value"] = string(b)
	return out
}

// checkCanary runs c through the recommended chain and checks the property.
func checkCanary(t *testing.T, canary string, c shapes.Case, canceled bool) {
	t.Helper()
	ch := newCanaryChain(t, c.Handler)
	ctx := context.Background()
	if canceled {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		ctx = cctx
	}
	var res *toolctx.CallResult
	require.NotPanics(t, func() { res = ch.h.CallTool(ctx, newReq("invoice")) }, "%s: the chain contains the failure", c.Name)
	require.NotNil(t, res, "%s: a result", c.Name)
	require.True(t, res.IsError, "%s: a failure", c.Name)
	require.NotNil(t, res.Error, "%s: the envelope is filled", c.Name)
	assert.True(t, res.Error.Code.Valid(), "%s: a valid code", c.Name)

	for where, s := range publicRenderings(t, res) {
		assert.NotContains(t, s, canary, "%s: the canary leaked into %s", c.Name, where)
		assert.NotContains(t, s, canaryPrefix, "%s: part of the canary leaked into %s", c.Name, where)
	}
	assert.Empty(t, ch.log.String(), "%s: nothing logged to the fallback", c.Name)

	// The server side carries the cause.
	serverSide := func(what string, err error) {
		t.Helper()
		require.Error(t, err, "%s: %s is set", c.Name, what)
		var pe *errs.PanicError
		switch {
		case c.Opaque && c.Panics:
			require.ErrorAs(t, err, &pe, "%s: %s is a PanicError", c.Name, what)
			assert.NotEmpty(t, pe.Stack, "%s: %s has its stack", c.Name, what)
		case c.Opaque:
			assert.Equal(t, c.Err, err, "%s: %s is the handler's error", c.Name, what)
		default:
			assert.True(t, shapes.Reaches(err, canary), "%s: %s carries the canary", c.Name, what)
		}
	}
	serverSide("Cause", res.Cause())

	public := c.Public || c.CtxErr && canceled
	evs := ch.diag.get()
	switch {
	case canceled:
		assert.Empty(t, evs, "%s: Diagnostics is suppressed after the client cancelled", c.Name)
		assert.Equal(t, !public, res.Scrubbed(), "%s: a raw error or panic stays scrubbed after cancellation (the audit row keeps its raw message)", c.Name)
		if !public && !c.Panics {
			assert.Equal(t, errs.CodeCanceled, res.Error.Code, "%s: a raw error after cancellation is canceled", c.Name)
		}
	case public:
		assert.False(t, res.Scrubbed(), "%s: a public error is not scrubbed", c.Name)
		assert.Empty(t, evs, "%s: Diagnostics is not called for a public error", c.Name)
	default:
		assert.True(t, res.Scrubbed(), "%s: scrubbed", c.Name)
		assert.Equal(t, errs.CodeInternal, res.Error.Code, "%s: internal", c.Name)
		assert.Equal(t, errs.GenericMessage, res.Error.Message, "%s: the generic message", c.Name)
		require.Len(t, evs, 1, "%s: Diagnostics called once", c.Name)
		serverSide("the Diagnostics event's error", evs[0].Cause())
		if c.Panics {
			assert.NotEmpty(t, stackOf(evs[0]), "%s: the event has the stack", c.Name)
		}
		assert.Equal(t, "invoice", evs[0].Details.Tool(), "%s: the event has the call details", c.Name)
	}

	infos := ch.after.get()
	require.Len(t, infos, 1, "%s: After called once", c.Name)
	info := infos[0]
	assert.Equal(t, *res.Error, info.Outcome.Public, "%s: After sees what the caller saw", c.Name)
	assert.Equal(t, res.Scrubbed(), info.Outcome.Scrubbed, "%s: After's scrubbed flag", c.Name)
	assert.NotContains(t, fmt.Sprintf("%+v", info.Outcome), canary, "%s: the outcome is public", c.Name)
	serverSide("After's cause", info.Cause())
	if info.Outcome.Scrubbed {
		// What the audit row records: the cause's server-side text.
		var row string
		require.NotPanics(t, func() { row = errs.Describe(info.Cause()) }, "%s: the row's message can always be rendered", c.Name)
		if !c.Opaque {
			assert.Contains(t, row, canary, "%s: the row's message names the cause", c.Name)
		}
		assert.NotContains(t, row, "goroutine ", "%s: the row's message has no stack", c.Name)
	}
}

// TestCanaryCheckerDetectsLeaks makes sure publicRenderings is not
// vacuous: a result that does carry the canary in public fields is caught.
func TestCanaryCheckerDetectsLeaks(t *testing.T) {
	canary := newCanary(rand.New(rand.NewSource(1)))
	leaky := &toolctx.CallResult{
		IsError:           true,
		Content:           []toolctx.Content{&toolctx.Text{Text: canary}},
		StructuredContent: map[string]string{"e": canary},
		Meta:              map[string]any{"e": canary},
		Error:             &errs.Public{Code: errs.CodeInternal, Message: canary, Detail: map[string]any{"e": canary}},
	}
	r := publicRenderings(t, leaky)
	for _, where := range []string{"content text", "structured content", "meta", "error message", "error detail", "fmt %v pointer", "fmt %+v value", "fmt %#v pointer", "fmt %s value", "slog text", "slog json", "json pointer", "json value"} {
		assert.Contains(t, r[where], canary, "the checker sees a canary in %s", where)
	}
}

func TestCanaryFixedShapes(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	canary := newCanary(r)
	for _, c := range shapes.Fixed(canary) {
		t.Run(c.Name, func(t *testing.T) { checkCanary(t, canary, c, false) })
		t.Run(c.Name+" after cancel", func(t *testing.T) { checkCanary(t, canary, c, true) })
	}
}

func TestCanaryRandomized(t *testing.T) {
	r := rand.New(rand.NewSource(20261129))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		canary := newCanary(r)
		c := shapes.Random(r, canary)
		c.Name = fmt.Sprintf("#%d %s", i, c.Name)
		canceled := r.Intn(10) == 0
		if canceled {
			c.Name += " (client cancelled)"
		}
		checkCanary(t, canary, c, canceled)
		if t.Failed() {
			t.Logf("first failing case: %s", c.Name)
			return
		}
	}
}
