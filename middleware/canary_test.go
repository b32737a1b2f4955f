package middleware_test

// The canary property: whatever shape a raw error takes, its text never
// reaches a public field of the result, nor its fmt, slog or JSON
// rendering, while the server side (Cause, the Diagnostics event, the After
// hook) still carries it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

const canaryPrefix = "CANARY-"

func newCanary(r *rand.Rand) string {
	return fmt.Sprintf("%s%08x-postgres://admin:hunter2@db.internal:5432", canaryPrefix, r.Uint32())
}

// canaryError is a custom error type whose text is the canary.
type canaryError struct{ secret string }

func (e *canaryError) Error() string { return "custom: " + e.secret }

// canaryCase is one shape of failure.
type canaryCase struct {
	name string
	// handler fails in some way that involves canary.
	handler toolctx.Handler
	// public: an explicit public error (Diagnostics is not called, the
	// result is not scrubbed).
	public bool
	// valueless: a panic whose value cannot hold the canary (nil, a
	// runtime error); the server side is checked for a PanicError instead.
	valueless bool
	// panics: the handler panics (Diagnostics gets a stack).
	panics bool
	// canceled: the client cancelled the call before the handler
	// returned: Diagnostics is suppressed, a raw error is reported as
	// canceled, a panic stays internal.
	canceled bool
}

func fixedCases(canary string) []canaryCase {
	raw := errors.New(canary)
	ret := func(err error) toolctx.Handler { return handlerReturning(toolctx.ErrorResult(err)) }
	sloppy := toolctx.ErrorResult(raw)
	// A handler that also put the raw text in public fields of its result:
	// normalization drops them.
	sloppy.Content = []toolctx.Content{&toolctx.Text{Text: canary}}
	sloppy.StructuredContent = map[string]string{"error": canary}
	sloppy.Meta = map[string]any{"error": canary}
	return []canaryCase{
		{name: "plain", handler: ret(raw)},
		{name: "wrapped %w", handler: ret(fmt.Errorf("load invoice: %w", raw))},
		{name: "wrapped twice with canary in the wrapper", handler: ret(fmt.Errorf("%s: %w", canary, fmt.Errorf("inner: %w", errors.New("x"))))},
		{name: "joined", handler: ret(errors.Join(errors.New("first"), raw))},
		{name: "custom type", handler: ret(&canaryError{canary})},
		{name: "errs.Error with a private cause", handler: ret(errs.NotFound("no such invoice").WithCause(raw)), public: true},
		{name: "errs.Error wrapped by a raw error naming the canary", handler: ret(fmt.Errorf("%s: %w", canary, errs.PermissionDenied("no").WithCause(raw))), public: true},
		{name: "errs.Error joined with the canary", handler: ret(errors.Join(raw, errs.Unavailable("later"))), public: true},
		{name: "context canceled wrapped with the canary", handler: ret(fmt.Errorf("%s: %w", canary, context.Canceled)), public: true},
		{name: "deadline joined with the canary", handler: ret(errors.Join(raw, context.DeadlineExceeded)), public: true},
		{name: "raw text in the result's public fields", handler: handlerReturning(sloppy)},
		{name: "typed handler error", handler: toolctx.Typed(func(context.Context, *toolctx.Request, struct{}) (struct{}, error) {
			return struct{}{}, fmt.Errorf("typed: %w", raw)
		})},
		{name: "panic string", handler: handlerPanicking(canary), panics: true},
		{name: "panic error", handler: handlerPanicking(fmt.Errorf("wrapped: %w", raw)), panics: true},
		{name: "panic struct", handler: handlerPanicking(panicStruct{Secret: canary}), panics: true},
		{name: "panic errs.Error", handler: handlerPanicking(errs.NotFound(canary)), panics: true},
		{name: "panic nil", handler: handlerPanicking(nil), panics: true, valueless: true},
		{name: "panic nil dereference", handler: nilDeref(), panics: true, valueless: true},
	}
}

// canaryChain is the recommended chain with recorders on both hooks.
type canaryChain struct {
	h     toolctx.Handler
	diag  *diagRecorder
	after *afterRecorder
	log   *syncBuffer
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
func checkCanary(t *testing.T, canary string, c canaryCase) {
	t.Helper()
	ch := newCanaryChain(t, c.handler)
	ctx := context.Background()
	if c.canceled {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		ctx = cctx
	}
	var res *toolctx.CallResult
	require.NotPanics(t, func() { res = ch.h.CallTool(ctx, newReq("invoice")) }, "%s: the chain contains the failure", c.name)
	require.NotNil(t, res, "%s: a result", c.name)
	require.True(t, res.IsError, "%s: a failure", c.name)
	require.NotNil(t, res.Error, "%s: the envelope is filled", c.name)
	assert.True(t, res.Error.Code.Valid(), "%s: a valid code", c.name)

	for where, s := range publicRenderings(t, res) {
		assert.NotContains(t, s, canary, "%s: the canary leaked into %s", c.name, where)
		assert.NotContains(t, s, canaryPrefix, "%s: part of the canary leaked into %s", c.name, where)
	}
	assert.Empty(t, ch.log.String(), "%s: nothing logged to the fallback", c.name)

	// The server side carries the cause.
	var pe *errs.PanicError
	cause := res.Cause()
	require.Error(t, cause, "%s: Cause is set", c.name)
	if c.valueless {
		require.ErrorAs(t, cause, &pe, "%s: the cause is a PanicError", c.name)
		assert.NotEmpty(t, pe.Stack, "%s: with its stack", c.name)
	} else {
		assert.Contains(t, cause.Error(), canary, "%s: Cause carries the canary", c.name)
	}

	evs := ch.diag.get()
	switch {
	case c.canceled:
		assert.Empty(t, evs, "%s: Diagnostics is suppressed after the client cancelled", c.name)
		assert.Equal(t, !c.public, res.Scrubbed(), "%s: a raw error or panic stays scrubbed after cancellation (the audit row keeps its raw message)", c.name)
		if !c.public && !c.panics {
			assert.Equal(t, errs.CodeCanceled, res.Error.Code, "%s: a raw error after cancellation is canceled", c.name)
		}
	case c.public:
		assert.False(t, res.Scrubbed(), "%s: a public error is not scrubbed", c.name)
		assert.Empty(t, evs, "%s: Diagnostics is not called for a public error", c.name)
	default:
		assert.True(t, res.Scrubbed(), "%s: scrubbed", c.name)
		assert.Equal(t, errs.CodeInternal, res.Error.Code, "%s: internal", c.name)
		assert.Equal(t, errs.GenericMessage, res.Error.Message, "%s: the generic message", c.name)
		require.Len(t, evs, 1, "%s: Diagnostics called once", c.name)
		if c.valueless {
			require.ErrorAs(t, evs[0].Err, &pe, "%s: the event holds the PanicError", c.name)
		} else {
			assert.Contains(t, evs[0].Err.Error(), canary, "%s: the Diagnostics event carries the canary", c.name)
		}
		if c.panics {
			assert.NotEmpty(t, evs[0].Stack, "%s: the event has the stack", c.name)
		}
		assert.Equal(t, "invoice", evs[0].Details.Tool(), "%s: the event has the call details", c.name)
	}

	infos := ch.after.get()
	require.Len(t, infos, 1, "%s: After called once", c.name)
	info := infos[0]
	assert.Equal(t, *res.Error, info.Outcome.Public, "%s: After sees what the caller saw", c.name)
	assert.Equal(t, res.Scrubbed(), info.Outcome.Scrubbed, "%s: After's scrubbed flag", c.name)
	assert.NotContains(t, fmt.Sprintf("%+v", info.Outcome), canary, "%s: the outcome is public", c.name)
	if c.valueless {
		assert.ErrorAs(t, info.Cause(), &pe, "%s: After's cause is the PanicError", c.name)
	} else {
		require.Error(t, info.Cause(), "%s: After's cause is set", c.name)
		assert.Contains(t, info.Cause().Error(), canary, "%s: After's cause carries the canary", c.name)
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
	for _, c := range fixedCases(canary) {
		t.Run(c.name, func(t *testing.T) { checkCanary(t, canary, c) })
		c.canceled = true
		t.Run(c.name+" after cancel", func(t *testing.T) { checkCanary(t, canary, c) })
	}
}

// randomCase builds a random error shape around canary: a chain of
// wrappings, joins, custom types and explicit public errors, returned or
// panicked in one of several ways.
func randomCase(r *rand.Rand, canary string) canaryCase {
	var (
		err    error
		public bool
		desc   []string
	)
	switch r.Intn(3) {
	case 0:
		err = errors.New(canary)
		desc = append(desc, "plain")
	case 1:
		err = &canaryError{canary}
		desc = append(desc, "custom")
	default:
		err = fmt.Errorf("%s: %w", canary, errors.New("leaf"))
		desc = append(desc, "canary-in-wrapper")
	}
	codes := errs.Codes()
	for depth := r.Intn(5); depth > 0; depth-- {
		switch r.Intn(5) {
		case 0:
			err = fmt.Errorf("layer %d: %w", depth, err)
			desc = append(desc, "wrap")
		case 1:
			err = errors.Join(errors.New("other"), err)
			desc = append(desc, "join")
		case 2:
			err = errors.Join(err, fmt.Errorf("again %s", canary))
			desc = append(desc, "join-canary")
		case 3:
			code := codes[r.Intn(len(codes))]
			err = errs.New(code, "public message "+string(code)).WithCause(err)
			public = true
			desc = append(desc, "errs.Error:"+string(code))
		case 4:
			err = fmt.Errorf("%s wrapped: %w", canary, err)
			desc = append(desc, "wrap-canary")
		}
	}
	switch r.Intn(4) {
	case 0:
		return canaryCase{name: strings.Join(append(desc, "panic-error"), ">"), handler: handlerPanicking(err), panics: true}
	case 1:
		return canaryCase{name: strings.Join(append(desc, "panic-string"), ">"), handler: handlerPanicking(err.Error()), panics: true}
	case 2:
		return canaryCase{name: strings.Join(append(desc, "panic-struct"), ">"), handler: handlerPanicking(panicStruct{Secret: err.Error()}), panics: true}
	}
	return canaryCase{name: strings.Join(append(desc, "return"), ">"), handler: handlerReturning(toolctx.ErrorResult(err)), public: public}
}

func TestCanaryRandomized(t *testing.T) {
	r := rand.New(rand.NewSource(20261129))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		canary := newCanary(r)
		c := randomCase(r, canary)
		c.name = fmt.Sprintf("#%d %s", i, c.name)
		if r.Intn(10) == 0 {
			c.canceled = true
			c.name += " (client cancelled)"
		}
		checkCanary(t, canary, c)
		if t.Failed() {
			t.Logf("first failing case: %s", c.name)
			return
		}
	}
}
