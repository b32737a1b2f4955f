package toolctx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

const canary = "CANARY-7f3a-postgres://admin:hunter2@10.0.0.5"

func canceledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func expiredCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	t.Cleanup(cancel)
	return ctx
}

func TestConstructors(t *testing.T) {
	r := toolctx.TextResult("hello")
	require.Len(t, r.Content, 1, "TextResult has one content")
	assert.Equal(t, &toolctx.Text{Text: "hello"}, r.Content[0], "TextResult content")
	assert.False(t, r.IsError, "TextResult is a success")
	assert.NoError(t, r.Cause(), "TextResult has no cause")
	assert.Nil(t, r.Error, "TextResult has no envelope")

	s := toolctx.StructuredResult(map[string]int{"n": 3})
	assert.False(t, s.IsError, "StructuredResult is a success")
	assert.JSONEq(t, `{"n":3}`, string(s.StructuredContent.(json.RawMessage)), "structured content is the JSON")
	assert.Equal(t, &toolctx.Text{Text: `{"n":3}`}, s.Content[0], "text content is the same JSON")

	bad := toolctx.StructuredResult(make(chan int))
	assert.True(t, bad.IsError, "an unencodable value is a failure")
	assert.Error(t, bad.Cause(), "the encoding error is the cause")
	assert.Nil(t, bad.StructuredContent, "no structured content on failure")

	cause := errors.New(canary)
	e := toolctx.ErrorResult(cause)
	assert.True(t, e.IsError, "ErrorResult is a failure")
	assert.Same(t, cause, e.Cause(), "ErrorResult keeps the raw error")
	assert.Nil(t, e.Error, "ErrorResult is not normalized yet")
	assert.Empty(t, e.Content, "ErrorResult has no content before normalization")
	assert.False(t, e.Scrubbed(), "not normalized, not scrubbed")

	n := toolctx.ErrorResult(nil)
	assert.True(t, n.IsError, "ErrorResult(nil) is still a failure")
	assert.Error(t, n.Cause(), "ErrorResult(nil) records a cause")

	var nilRes *toolctx.CallResult
	assert.ErrorIs(t, nilRes.Cause(), toolctx.ErrNilResult, "a nil result's cause is ErrNilResult")
	assert.False(t, nilRes.Scrubbed(), "a nil result is not scrubbed")
}

func TestClassify(t *testing.T) {
	raw := errors.New(canary)
	n := errs.Normalizer{}
	bg := context.Background()

	o := toolctx.Classify(bg, nil, n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, Scrubbed: true}, o, "nil result is an internal, scrubbed failure")

	assert.Equal(t, toolctx.Outcome{}, toolctx.Classify(bg, toolctx.TextResult("ok"), n), "success is the zero outcome")

	already := toolctx.Normalized(bg, toolctx.ErrorResult(raw), n)
	o = toolctx.Classify(bg, already, n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: *already.Error, Scrubbed: true}, o, "an already-normalized result keeps its envelope and scrubbed flag")
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: *already.Error, Scrubbed: true}, toolctx.Classify(canceledCtx(), already, n), "an already-normalized result is not reclassified after cancellation")

	own := &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "city not known"}, &toolctx.Image{Data: []byte{1}}, &toolctx.Text{Text: "try Paris"}}}
	o = toolctx.Classify(bg, own, n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeToolError, Message: "city not known\ntry Paris"}}, o, "a handler's own isError result is public, its text joined")
	o = toolctx.Classify(bg, &toolctx.CallResult{IsError: true}, n)
	assert.Equal(t, errs.CodeToolError.DefaultMessage(), o.Public.Message, "a handler's own isError result with no text gets the default message")

	o = toolctx.Classify(bg, toolctx.ErrorResult(raw), n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, Scrubbed: true}, o, "raw cause is scrubbed")

	o = toolctx.Classify(bg, toolctx.ErrorResult(errs.NotFound("nope").WithCause(raw)), n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeNotFound, Message: "nope"}}, o, "explicit public error")

	o = toolctx.Classify(canceledCtx(), toolctx.ErrorResult(raw), n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeCanceled, Message: errs.CodeCanceled.DefaultMessage()}, Scrubbed: true}, o, "raw cause after cancellation is shown as canceled, still scrubbed")

	o = toolctx.Classify(expiredCtx(t), toolctx.ErrorResult(raw), n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeTimeout, Message: errs.CodeTimeout.DefaultMessage()}, Scrubbed: true}, o, "raw cause after the deadline is shown as timeout, still scrubbed")

	o = toolctx.Classify(expiredCtx(t), toolctx.ErrorResult(context.DeadlineExceeded), n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeTimeout, Message: errs.CodeTimeout.DefaultMessage()}}, o, "the deadline's own error is public: nothing was scrubbed")

	o = toolctx.Classify(canceledCtx(), toolctx.ErrorResult(errs.NotFound("nope")), n)
	assert.Equal(t, errs.CodeNotFound, o.Public.Code, "an explicit public error is kept after cancellation")

	o = toolctx.Classify(canceledCtx(), toolctx.ErrorResult(errs.NewPanicError(canary)), n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, Scrubbed: true}, o, "a panic stays internal and scrubbed even after cancellation")
}

// lateTimer is a context whose deadline has passed but whose timer has not
// fired yet (ctx.Err() is nil): what a loaded machine shows for tens of
// milliseconds after a deadline.
type lateTimer struct {
	context.Context
	deadline time.Time
}

func (l lateTimer) Deadline() (time.Time, bool) { return l.deadline, true }

func TestClassifyReadsTheDeadlineAndTheCallsEnd(t *testing.T) {
	n := errs.Normalizer{}
	raw := errors.New(canary)
	late := lateTimer{context.Background(), time.Now().Add(-50 * time.Millisecond)}
	o := toolctx.Classify(late, toolctx.ErrorResult(raw), n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeTimeout, Message: errs.CodeTimeout.DefaultMessage()}, Scrubbed: true}, o,
		"a raw error after the deadline is a timeout even before the context's timer fires")

	// A context error the live call's context does not explain is raw.
	for _, cause := range []error{
		fmt.Errorf("query %s: %w", canary, context.Canceled),
		errors.Join(raw, context.DeadlineExceeded),
		context.DeadlineExceeded,
	} {
		o = toolctx.Classify(context.Background(), toolctx.ErrorResult(cause), n)
		assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, Scrubbed: true}, o,
			"%v: a context error while the call is live is a raw failure", cause)
		out := toolctx.Normalized(context.Background(), toolctx.ErrorResult(cause), n)
		assert.True(t, out.Scrubbed(), "%v: Normalized scrubs it", cause)
		assert.Equal(t, cause, out.Cause(), "%v: and keeps it as the cause, for the row", cause)
	}
	o = toolctx.Classify(canceledCtx(), toolctx.ErrorResult(fmt.Errorf("query %s: %w", canary, context.Canceled)), n)
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: errs.Public{Code: errs.CodeCanceled, Message: errs.CodeCanceled.DefaultMessage()}}, o,
		"after the call was cancelled the same error is the public cancellation")
}

func TestNormalized(t *testing.T) {
	raw := errors.New(canary)
	n := errs.Normalizer{}
	bg := context.Background()

	ok := toolctx.TextResult("ok")
	assert.Same(t, ok, toolctx.Normalized(bg, ok, n), "success is returned unchanged")

	first := toolctx.Normalized(bg, toolctx.ErrorResult(raw), n)
	assert.Same(t, first, toolctx.Normalized(bg, first, n), "an already-normalized result is returned unchanged")

	orig := toolctx.ErrorResult(raw)
	orig.Meta = map[string]any{"leak": canary}
	orig.StructuredContent = map[string]string{"leak": canary}
	orig.Content = []toolctx.Content{&toolctx.Text{Text: canary}}
	out := toolctx.Normalized(bg, orig, n)
	assert.NotSame(t, orig, out, "a failure becomes a new result")
	assert.True(t, out.IsError, "IsError")
	require.NotNil(t, out.Error, "envelope set")
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, *out.Error, "generic envelope")
	assert.Equal(t, []toolctx.Content{&toolctx.Text{Text: errs.GenericMessage}}, out.Content, "the public message is the only content")
	assert.Nil(t, out.StructuredContent, "no structured content")
	assert.Nil(t, out.Meta, "no _meta")
	assert.Same(t, raw, out.Cause(), "raw cause kept")
	assert.True(t, out.Scrubbed(), "scrubbed")
	assert.Nil(t, orig.Error, "the original result is not changed")

	own := &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "city not known"}}}
	out = toolctx.Normalized(bg, own, n)
	assert.Equal(t, own.Content, out.Content, "a handler's own isError result keeps its content")
	assert.Equal(t, errs.Public{Code: errs.CodeToolError, Message: "city not known"}, *out.Error, "tool_error envelope")
	assert.NoError(t, out.Cause(), "no raw cause")
	assert.False(t, out.Scrubbed(), "not scrubbed")

	empty := toolctx.Normalized(bg, &toolctx.CallResult{IsError: true}, n)
	assert.Equal(t, []toolctx.Content{&toolctx.Text{Text: errs.CodeToolError.DefaultMessage()}}, empty.Content, "own isError result with no content gets the message as content")

	nilOut := toolctx.Normalized(bg, nil, n)
	require.NotNil(t, nilOut, "a nil result becomes a failure")
	assert.ErrorIs(t, nilOut.Cause(), toolctx.ErrNilResult, "its cause is ErrNilResult")
	assert.Equal(t, errs.CodeInternal, nilOut.Error.Code, "internal")
	assert.True(t, nilOut.Scrubbed(), "scrubbed")

	pub := toolctx.Normalized(bg, toolctx.ErrorResult(errs.NotFound("no such city").WithDetail(map[string]any{"city": "x"}).WithCause(raw)), n)
	assert.Equal(t, errs.Public{Code: errs.CodeNotFound, Message: "no such city", Detail: map[string]any{"city": "x"}}, *pub.Error, "explicit error envelope")
	assert.False(t, pub.Scrubbed(), "explicit error is not scrubbed")
	assert.ErrorIs(t, pub.Cause(), raw, "cause kept")

	custom := toolctx.Normalized(bg, toolctx.ErrorResult(raw), errs.Normalizer{GenericMessage: "oops"})
	assert.Equal(t, "oops", custom.Error.Message, "the normalizer's generic message")

	canc := toolctx.Normalized(canceledCtx(), toolctx.ErrorResult(raw), n)
	assert.Equal(t, errs.CodeCanceled, canc.Error.Code, "raw cause after cancellation")
	assert.Same(t, raw, canc.Cause(), "the raw cause is still kept")
}

func TestCallResultPrintingHidesCause(t *testing.T) {
	r := toolctx.Normalized(context.Background(), toolctx.ErrorResult(fmt.Errorf("wrapped: %w", errors.New(canary))), errs.Normalizer{})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		assert.NotContains(t, fmt.Sprintf(verb, r), "CANARY", "pointer printed with %s", verb)
		assert.NotContains(t, fmt.Sprintf(verb, *r), "CANARY", "value printed with %s", verb)
	}
	assert.Contains(t, fmt.Sprintf("%+v", r), "IsError:true", "the public fields are printed")
	b, err := json.Marshal(r)
	require.NoError(t, err, "marshal")
	assert.NotContains(t, string(b), "CANARY", "JSON has no cause")

	var nilRes *toolctx.CallResult
	assert.NotPanics(t, func() { _ = fmt.Sprintf("%v", nilRes) }, "printing a nil result does not panic")
}

func TestContextHelpers(t *testing.T) {
	bg := context.Background()
	assert.Nil(t, toolctx.IdentityFrom(bg), "no identity by default")
	assert.Empty(t, toolctx.RequestIDFrom(bg), "no request id by default")

	ctx := toolctx.WithIdentity(bg, toolctx.Identity{Subject: "alice", Scopes: []string{"read"}})
	ctx = toolctx.WithRequestID(ctx, "req-1")
	id := toolctx.IdentityFrom(ctx)
	require.NotNil(t, id, "identity set")
	assert.Equal(t, "alice", id.Subject, "subject")
	assert.Equal(t, []string{"read"}, id.Scopes, "scopes")
	assert.Equal(t, "req-1", toolctx.RequestIDFrom(ctx), "request id")

	hidden := toolctx.WithRequestID(toolctx.WithIdentity(ctx, toolctx.Identity{}), "")
	assert.Nil(t, toolctx.IdentityFrom(hidden), "the zero Identity hides an outer one")
	assert.Empty(t, toolctx.RequestIDFrom(hidden), "an empty request id hides an outer one")
}

func TestDetailsReadOnly(t *testing.T) {
	req := &toolctx.Request{
		Tool: "search", CallID: "c1", RequestID: "r1", SessionID: "s1", Transport: toolctx.TransportStdio,
		Arguments: toolctx.RawArguments(json.RawMessage(`{"password":"` + canary + `"}`)),
		Header:    map[string][]string{"Authorization": {"Bearer " + canary}},
		Meta:      map[string]any{"progressToken": "p", "nested": map[string]any{"k": []any{"v", map[string]any{"deep": 1}}}},
		Identity:  &toolctx.Identity{Subject: "alice", Scopes: []string{"read", "write"}},
	}
	d := toolctx.DetailsOf(req)
	assert.False(t, d.IsZero(), "details of a request are not zero")
	assert.Equal(t, "search", d.Tool(), "tool")
	assert.Equal(t, "c1", d.CallID(), "call id")
	assert.Equal(t, "r1", d.RequestID(), "request id")
	assert.Equal(t, "s1", d.SessionID(), "session id")
	assert.Equal(t, toolctx.TransportStdio, d.Transport(), "transport")
	assert.Equal(t, "alice", d.Subject(), "subject")

	scopes := d.Scopes()
	scopes[0] = "admin"
	assert.Equal(t, []string{"read", "write"}, req.Identity.Scopes, "mutating returned scopes does not change the request")
	assert.Equal(t, []string{"read", "write"}, d.Scopes(), "details still report the original scopes")

	meta := d.Meta()
	meta["progressToken"] = "changed"
	meta["new"] = true
	meta["nested"].(map[string]any)["k"].([]any)[0] = "changed"
	meta["nested"].(map[string]any)["k"].([]any)[1].(map[string]any)["deep"] = 2
	assert.Equal(t, map[string]any{"progressToken": "p", "nested": map[string]any{"k": []any{"v", map[string]any{"deep": 1}}}}, req.Meta, "mutating returned meta (deeply) does not change the request")

	rendered := fmt.Sprintf("%v %+v", d, d.LogValue())
	assert.NotContains(t, rendered, "CANARY", "details carry no arguments or headers")

	var zero toolctx.Details
	assert.True(t, zero.IsZero(), "zero details")
	assert.Empty(t, zero.Tool(), "zero tool")
	assert.Empty(t, zero.CallID(), "zero call id")
	assert.Empty(t, zero.RequestID(), "zero request id")
	assert.Empty(t, zero.SessionID(), "zero session id")
	assert.Empty(t, zero.Transport(), "zero transport")
	assert.Empty(t, zero.Subject(), "zero subject")
	assert.Nil(t, zero.Scopes(), "zero scopes")
	assert.Nil(t, zero.Meta(), "zero meta")
	noID := toolctx.DetailsOf(&toolctx.Request{Tool: "x"})
	assert.Empty(t, noID.Subject(), "no identity, no subject")
	assert.Nil(t, noID.Scopes(), "no identity, no scopes")
	b := []byte("ab")
	inner := map[string]any{"k": "v"}
	copied := toolctx.DetailsOf(&toolctx.Request{Meta: map[string]any{"b": b, "l": []any{inner}}}).Meta()
	copied["b"].([]byte)[0] = 'z'
	copied["l"].([]any)[0].(map[string]any)["k"] = "changed"
	assert.Equal(t, "ab", string(b), "Meta copies byte slices")
	assert.Equal(t, "v", inner["k"], "and nested maps")
}

type badOut struct {
	F float64
}

func TestTyped(t *testing.T) {
	type In struct {
		City  string `json:"city"`
		Days  int    `json:"days"`
		Inner struct {
			Flag bool `json:"flag"`
		} `json:"inner"`
	}
	type Out struct {
		Forecast string `json:"forecast"`
	}
	var calls int
	var got In
	h := toolctx.Typed(func(ctx context.Context, req *toolctx.Request, in In) (Out, error) {
		calls++
		got = in
		switch in.City {
		case "error":
			return Out{}, errors.New(canary)
		case "public":
			return Out{}, errs.NotFound("no such city")
		}
		return Out{Forecast: in.City + " sunny"}, nil
	})
	call := func(args string) *toolctx.CallResult {
		return h.CallTool(context.Background(), &toolctx.Request{Tool: "weather", Arguments: toolctx.RawArguments(json.RawMessage(args))})
	}

	r := call(`{"city":"Paris","days":2,"inner":{"flag":true}}`)
	require.False(t, r.IsError, "success")
	assert.JSONEq(t, `{"forecast":"Paris sunny"}`, string(r.StructuredContent.(json.RawMessage)), "structured content")
	assert.Equal(t, []toolctx.Content{&toolctx.Text{Text: `{"forecast":"Paris sunny"}`}}, r.Content, "text content is the JSON")
	assert.Equal(t, 2, got.Days, "decoded")
	assert.True(t, got.Inner.Flag, "decoded nested")

	invalid := map[string]struct{ field, msg string }{
		`{"city":"Paris","days":"two"}`:  {"days", `invalid arguments: days: expected an integer, got a string`},
		`{"city":3}`:                     {"city", `invalid arguments: city: expected a string, got a number`},
		`{"inner":{"flag":"yes"}}`:       {"inner.flag", `inner.flag: expected a boolean, got a string`},
		`{"city":"Paris","days":1e400}`:  {"days", `invalid arguments: days: number out of range`},
		`{"city":"Paris","days":2.5}`:    {"days", `days: expected an integer, got a number`},
		`{"city":"Paris","color":"red"}`: {"color", `unknown field "color"`},
		`{"city":"Paris"`:                {"", "truncated JSON"},
		`{"city":Paris}`:                 {"", "malformed JSON at byte"},
		`{"city":"Paris"} {"x":1}`:       {"", "trailing data"},
		`{"city":"Paris"}}`:              {"", "trailing data"},
		`["Paris"]`:                      {"", "expected a JSON object"},
		`"Paris"`:                        {"", "expected a JSON object"},
		`42`:                             {"", "expected a JSON object"},
	}
	for args, want := range invalid {
		before := calls
		r := call(args)
		require.True(t, r.IsError, "%s: failure", args)
		assert.Equal(t, before, calls, "%s: fn not called", args)
		var e *errs.Error
		require.ErrorAs(t, r.Cause(), &e, "%s: cause is an *errs.Error", args)
		assert.Equal(t, errs.CodeInvalidArguments, e.Code(), "%s: invalid arguments", args)
		assert.Contains(t, e.Message(), want.msg, "%s: message", args)
		if want.field != "" {
			problems, _ := e.Detail()["problems"].([]any)
			require.NotEmpty(t, problems, "%s: detail lists the problems", args)
			first, _ := problems[0].(map[string]any)
			assert.Equal(t, want.field, first["path"], "%s: detail names the field", args)
		}
		pub, scrubbed := errs.Normalize(r.Cause())
		assert.False(t, scrubbed, "%s: invalid arguments feedback is public", args)
		assert.Equal(t, errs.CodeInvalidArguments, pub.Code, "%s: public code", args)
	}

	for _, args := range []string{``, `  `, `null`, ` null `} {
		before := calls
		r := call(args)
		require.False(t, r.IsError, "%q: empty arguments are the zero value", args)
		assert.Equal(t, before+1, calls, "%q: fn called", args)
		assert.Equal(t, In{}, got, "%q: zero value", args)
	}

	r = call(`{"city":"error"}`)
	require.True(t, r.IsError, "fn error is a failure")
	assert.EqualError(t, r.Cause(), canary, "fn's raw error is the cause")
	_, scrubbed := errs.Normalize(r.Cause())
	assert.True(t, scrubbed, "a raw fn error is scrubbed")

	r = call(`{"city":"public"}`)
	pub, scrubbed := errs.Normalize(r.Cause())
	assert.Equal(t, errs.CodeNotFound, pub.Code, "a public fn error keeps its code")
	assert.False(t, scrubbed, "a public fn error is not scrubbed")

	ch := toolctx.Typed(func(context.Context, *toolctx.Request, struct{}) (chan int, error) { return make(chan int), nil })
	r = ch.CallTool(context.Background(), &toolctx.Request{})
	require.True(t, r.IsError, "an unencodable Out (chan) is a failure")
	pub, scrubbed = errs.Normalize(r.Cause())
	assert.Equal(t, errs.CodeInternal, pub.Code, "unencodable Out is internal")
	assert.True(t, scrubbed, "unencodable Out is scrubbed")

	inf := toolctx.Typed(func(context.Context, *toolctx.Request, struct{}) (badOut, error) { return badOut{F: math.Inf(1)}, nil })
	r = inf.CallTool(context.Background(), &toolctx.Request{})
	require.True(t, r.IsError, "an unencodable Out (+Inf) is a failure")
	assert.Equal(t, errs.CodeInternal, errs.CodeOf(r.Cause()), "+Inf is internal")
}

// typeErrUnmarshaler returns a *json.UnmarshalTypeError with no Type, as a
// hand-written UnmarshalJSON may.
type typeErrUnmarshaler struct{}

func (*typeErrUnmarshaler) UnmarshalJSON([]byte) error {
	return &json.UnmarshalTypeError{Value: "thing"}
}

// secretUnmarshaler fails with a raw message, as a custom type may.
type secretUnmarshaler struct{}

func (*secretUnmarshaler) UnmarshalJSON([]byte) error { return errors.New(canary) }

func TestDecodeArgumentsCustomUnmarshalers(t *testing.T) {
	var a struct {
		X typeErrUnmarshaler `json:"x"`
	}
	var err error
	require.NotPanics(t, func() { err = toolctx.DecodeArguments(json.RawMessage(`{"x":1}`), &a) }, "an UnmarshalTypeError without a Type must not panic")
	var e *errs.Error
	require.ErrorAs(t, err, &e, "an *errs.Error")
	assert.Equal(t, errs.CodeInvalidArguments, e.Code(), "invalid arguments")

	var b struct {
		X secretUnmarshaler `json:"x"`
	}
	err = toolctx.DecodeArguments(json.RawMessage(`{"x":1}`), &b)
	require.ErrorAs(t, err, &e, "an *errs.Error")
	assert.Equal(t, errs.CodeInvalidArguments, e.Code(), "invalid arguments")
	assert.NotContains(t, e.Message(), "CANARY", "a custom unmarshaler's raw message is not public")
	assert.NotContains(t, err.Error(), "CANARY", "nor in the error's text")
	assert.Contains(t, fmt.Sprintf("%+v", err), "CANARY", "but it is the private cause, shown on the server side")
}

func TestNormalizedRepairsHandBuiltEnvelope(t *testing.T) {
	bg := context.Background()
	hand := &toolctx.CallResult{IsError: true, Error: &errs.Public{Code: "made_up", Message: ""}, Content: []toolctx.Content{&toolctx.Text{Text: "x"}}}
	out := toolctx.Normalized(bg, hand, errs.Normalizer{})
	require.NotSame(t, hand, out, "a broken envelope is repaired in a copy")
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, *out.Error, "invalid code becomes internal with its default message")
	assert.Equal(t, errs.Code("made_up"), hand.Error.Code, "the original is not changed")
	assert.Equal(t, hand.Content, out.Content, "the content is kept")
	assert.Equal(t, errs.CodeInternal, toolctx.Classify(bg, hand, errs.Normalizer{}).Public.Code, "Classify reports a valid code too")

	good := &toolctx.CallResult{IsError: true, Error: &errs.Public{Code: errs.CodeNotFound, Message: "gone"}}
	assert.Same(t, good, toolctx.Normalized(bg, good, errs.Normalizer{}), "a valid envelope is returned unchanged")
	noMsg := toolctx.Normalized(bg, &toolctx.CallResult{IsError: true, Error: &errs.Public{Code: errs.CodeNotFound}}, errs.Normalizer{})
	assert.Equal(t, "not found", noMsg.Error.Message, "an empty message gets the code's default")
}

func TestScrubbedResult(t *testing.T) {
	bg := context.Background()
	raw := errors.New(canary)
	pub := errs.Public{Code: errs.CodeTimeout, Message: "took too long"}
	r := toolctx.ScrubbedResult(pub, raw)
	require.True(t, r.IsError, "a failure")
	assert.Equal(t, pub, *r.Error, "the given envelope")
	assert.True(t, r.Scrubbed(), "scrubbed: the row records the raw message")
	assert.Same(t, raw, r.Cause(), "the raw cause is kept")
	assert.Equal(t, []toolctx.Content{&toolctx.Text{Text: "took too long"}}, r.Content, "the public message is the only content")
	assert.Same(t, r, toolctx.Normalized(bg, r, errs.Normalizer{}), "already normalized")
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: pub, Scrubbed: true}, toolctx.Classify(bg, r, errs.Normalizer{}), "Classify reads it back")
	b, err := json.Marshal(r)
	require.NoError(t, err, "marshal")
	assert.NotContains(t, string(b), "CANARY", "JSON has no cause")
	assert.NotContains(t, fmt.Sprintf("%+v", r), "CANARY", "printing shows no cause")

	bad := toolctx.ScrubbedResult(errs.Public{Code: "made_up"}, raw)
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, *bad.Error, "an invalid envelope is repaired")
	assert.Error(t, toolctx.ScrubbedResult(pub, nil).Cause(), "a nil cause is recorded as a failure")
}

func TestEnvelopeWithoutIsErrorIsAFailure(t *testing.T) {
	bg := context.Background()
	pub := errs.Public{Code: errs.CodeNotFound, Message: "no such invoice"}
	hand := &toolctx.CallResult{Error: &pub}
	assert.True(t, hand.Failed(), "Failed says so")
	assert.Equal(t, toolctx.Outcome{Failed: true, Public: pub}, toolctx.Classify(bg, hand, errs.Normalizer{}), "Classify does not take it for a success")
	out := toolctx.Normalized(bg, hand, errs.Normalizer{})
	require.NotSame(t, hand, out, "repaired in a copy")
	assert.True(t, out.IsError, "Normalized sets IsError")
	assert.False(t, hand.IsError, "the original is not changed")
	assert.False(t, toolctx.TextResult("ok").Failed(), "a success is not")
	assert.True(t, (*toolctx.CallResult)(nil).Failed(), "a nil result is")
}

// TestNormalizedOwnFailureDropsBlockMeta: a handler's own isError result
// keeps its content but no _meta, its blocks' included, as a failure
// carries no _meta; the handler's result itself is not changed.
func TestNormalizedOwnFailureDropsBlockMeta(t *testing.T) {
	own := &toolctx.CallResult{IsError: true, Meta: map[string]any{"cause": canary}, Content: []toolctx.Content{
		&toolctx.Text{Text: "not ready", Meta: map[string]any{"cause": canary}},
		&toolctx.EmbeddedResource{Resource: toolctx.ResourceContents{URI: "file:///r", Text: "pending", Meta: map[string]any{"cause": canary}}, Meta: map[string]any{"c": canary}},
	}}
	out := toolctx.Normalized(context.Background(), own, errs.Normalizer{})
	b, err := json.Marshal(out)
	require.NoError(t, err)
	assert.NotContains(t, string(b), canary, "no _meta anywhere in the failure")
	assert.Contains(t, string(b), "not ready", "the content is kept")
	assert.Equal(t, canary, own.Content[0].(*toolctx.Text).Meta["cause"], "the handler's result is not changed")
}

// hostileArg's UnmarshalJSON fails with the error of its kind, which names
// the canary: the shapes encoding/json's own errors have.
type hostileArg struct{ kind int }

func (a *hostileArg) UnmarshalJSON([]byte) error {
	switch a.kind {
	case 0:
		return fmt.Errorf("json: unknown field %q", canary)
	case 1:
		return errors.New("trailing data " + canary)
	case 2:
		return &json.UnmarshalTypeError{Value: "string " + canary, Type: reflect.TypeOf(""), Field: canary}
	default:
		return &json.UnmarshalTypeError{Value: "number", Type: reflect.TypeOf(0), Field: canary}
	}
}

// TestTypedDecodeErrorsOfUnmarshalers: an UnmarshalJSON method's error that
// looks like encoding/json's own (an unknown field, trailing data, a type
// error) never gives the client its words: only what the caller sent is
// described. encoding/json's own errors still are.
func TestTypedDecodeErrorsOfUnmarshalers(t *testing.T) {
	for kind := range 4 {
		var in struct {
			A hostileArg `json:"a"`
		}
		in.A.kind = kind
		err := toolctx.DecodeArguments(json.RawMessage(`{"a": "x"}`), &in)
		require.Error(t, err, "kind %d", kind)
		pub, _ := errs.Normalize(err)
		b, jerr := json.Marshal(pub)
		require.NoError(t, jerr)
		assert.Equal(t, errs.CodeInvalidArguments, pub.Code, "kind %d", kind)
		assert.NotContains(t, string(b), "CANARY", "kind %d: the method's words are not the caller's: %s", kind, b)
	}
	var own struct {
		Count int `json:"count"`
	}
	err := toolctx.DecodeArguments(json.RawMessage(`{"count": "three"}`), &own)
	pub, _ := errs.Normalize(err)
	assert.Contains(t, pub.Message, "count", "encoding/json's own type error names the argument: %q", pub.Message)
	err = toolctx.DecodeArguments(json.RawMessage(`{"count": 3, "extra": 1}`), &own)
	pub, _ = errs.Normalize(err)
	assert.Contains(t, pub.Message, `"extra"`, "its unknown field is named: %q", pub.Message)
	err = toolctx.DecodeArguments(json.RawMessage(`{"count": 3} {}`), &own)
	pub, _ = errs.Normalize(err)
	assert.Contains(t, pub.Message, "trailing data", "trailing data is said: %q", pub.Message)
}
