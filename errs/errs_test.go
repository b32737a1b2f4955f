package errs_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
)

// goldenCodes is the contract: these strings never change. A new code is
// added here; an existing line is never edited.
var goldenCodes = []string{
	"invalid_arguments",
	"not_found",
	"already_exists",
	"failed_precondition",
	"permission_denied",
	"unauthenticated",
	"rate_limited",
	"quota_exceeded",
	"timeout",
	"canceled",
	"unavailable",
	"unknown_tool",
	"invalid_request",
	"result_too_large",
	"tool_error",
	"internal",
}

func TestCodesGolden(t *testing.T) {
	codes := errs.Codes()
	got := make([]string, len(codes))
	for i, c := range codes {
		got[i] = string(c)
	}
	require.Equal(t, goldenCodes, got, "the code strings are a contract and must not change")

	seen := map[errs.Code]bool{}
	for _, c := range codes {
		assert.True(t, c.Valid(), "code %q must be valid", c)
		assert.False(t, seen[c], "code %q must be unique", c)
		seen[c] = true
		assert.Regexp(t, `^[a-z][a-z_]*[a-z]$`, string(c), "code %q must be lower snake case", c)
		assert.NotEmpty(t, c.DefaultMessage(), "code %q must have a default message", c)
	}
	assert.False(t, errs.Code("").Valid(), "the empty code is not valid")
	assert.False(t, errs.Code("Internal").Valid(), "codes are case-sensitive")
	assert.False(t, errs.Code("bogus").Valid(), "an unknown code is not valid")
}

func TestCodesReturnsCopy(t *testing.T) {
	a := errs.Codes()
	a[0] = "mutated"
	assert.Equal(t, errs.CodeInvalidArguments, errs.Codes()[0], "mutating the slice Codes returned must not change the set")
}

func TestCodeConstantsStable(t *testing.T) {
	cases := map[errs.Code]string{
		errs.CodeInvalidArguments:   "invalid_arguments",
		errs.CodeNotFound:           "not_found",
		errs.CodeAlreadyExists:      "already_exists",
		errs.CodeFailedPrecondition: "failed_precondition",
		errs.CodePermissionDenied:   "permission_denied",
		errs.CodeUnauthenticated:    "unauthenticated",
		errs.CodeRateLimited:        "rate_limited",
		errs.CodeQuotaExceeded:      "quota_exceeded",
		errs.CodeTimeout:            "timeout",
		errs.CodeCanceled:           "canceled",
		errs.CodeUnavailable:        "unavailable",
		errs.CodeUnknownTool:        "unknown_tool",
		errs.CodeInvalidRequest:     "invalid_request",
		errs.CodeToolError:          "tool_error",
		errs.CodeInternal:           "internal",
	}
	for c, s := range cases {
		assert.Equal(t, s, string(c), "constant for %q changed", s)
	}
}

func TestJSONRPCMapping(t *testing.T) {
	want := map[errs.Code]int{
		errs.CodeUnknownTool:    -32602,
		errs.CodeInvalidRequest: -32600,
		errs.CodeInternal:       -32603,
	}
	for _, c := range errs.Codes() {
		code, ok := c.JSONRPC()
		if w, isProto := want[c]; isProto {
			assert.True(t, ok, "code %q is reported as a protocol error", c)
			assert.Equal(t, w, code, "JSON-RPC code of %q", c)
		} else {
			assert.False(t, ok, "code %q is reported in a tool result, not as a protocol error", c)
			assert.Zero(t, code, "code %q has no JSON-RPC code", c)
		}
	}
	assert.Equal(t, -32600, errs.JSONRPCInvalidRequest, "JSON-RPC invalid request")
	assert.Equal(t, -32601, errs.JSONRPCMethodNotFound, "JSON-RPC method not found")
	assert.Equal(t, -32602, errs.JSONRPCInvalidParams, "JSON-RPC invalid params")
	assert.Equal(t, -32603, errs.JSONRPCInternalError, "JSON-RPC internal error")
}

func TestConstructors(t *testing.T) {
	cases := []struct {
		err  *errs.Error
		code errs.Code
	}{
		{errs.InvalidArguments("m"), errs.CodeInvalidArguments},
		{errs.NotFound("m"), errs.CodeNotFound},
		{errs.AlreadyExists("m"), errs.CodeAlreadyExists},
		{errs.FailedPrecondition("m"), errs.CodeFailedPrecondition},
		{errs.PermissionDenied("m"), errs.CodePermissionDenied},
		{errs.Unauthenticated("m"), errs.CodeUnauthenticated},
		{errs.RateLimited("m"), errs.CodeRateLimited},
		{errs.QuotaExceeded("m"), errs.CodeQuotaExceeded},
		{errs.Timeout("m"), errs.CodeTimeout},
		{errs.Canceled("m"), errs.CodeCanceled},
		{errs.Unavailable("m"), errs.CodeUnavailable},
		{errs.Internal("m"), errs.CodeInternal},
		{errs.New(errs.CodeToolError, "m"), errs.CodeToolError},
		{errs.Errorf(errs.CodeNotFound, "%s", "m"), errs.CodeNotFound},
	}
	for _, c := range cases {
		assert.Equal(t, c.code, c.err.Code(), "constructor code")
		assert.Equal(t, "m", c.err.Message(), "constructor message")
		assert.Nil(t, c.err.Unwrap(), "a new error has no cause")
		assert.Equal(t, "m", c.err.Error(), "Error text is the public message")
	}
	u := errs.UnknownTool("frob")
	assert.Equal(t, errs.CodeUnknownTool, u.Code(), "UnknownTool code")
	assert.Equal(t, `unknown tool "frob"`, u.Message(), "UnknownTool names the tool")
}

func TestErrorfDoesNotWrap(t *testing.T) {
	e := errs.Errorf(errs.CodeNotFound, "x: %v", "inner")
	assert.Nil(t, e.Unwrap(), "Errorf of no error has no cause")
	inner := errors.New("inner")
	e = errs.Errorf(errs.CodeNotFound, "x: %w", inner)
	assert.Equal(t, "x: "+errs.WithheldError, e.Error(), "%w is not a wrapping verb here, and a raw error is withheld")
	assert.Same(t, inner, e.Unwrap(), "a raw error argument is the private cause (TestErrorfWithholdsRawErrors)")
}

func TestWithCauseAndDetailCopy(t *testing.T) {
	base := errs.NotFound("no such invoice")
	cause := errors.New("sql: no rows in result set")
	withCause := base.WithCause(cause)
	withDetail := withCause.WithDetail(map[string]any{"id": 7})

	assert.Nil(t, base.Unwrap(), "WithCause must not change the receiver")
	assert.Nil(t, base.Detail(), "WithDetail must not change the original")
	assert.Nil(t, withCause.Detail(), "WithDetail must not change its receiver")
	assert.Same(t, cause, withCause.Unwrap(), "WithCause sets the cause")
	assert.Same(t, cause, withDetail.Unwrap(), "WithDetail keeps the cause")
	assert.Equal(t, map[string]any{"id": 7}, withDetail.Detail(), "WithDetail sets the detail")
	assert.Equal(t, "no such invoice", withCause.Error(), "Error text is the public message, never the cause")
	assert.Equal(t, "load: no such invoice", fmt.Errorf("load: %w", withCause).Error(), "a wrapper's text has the public message only")
	assert.Equal(t, "not_found: no such invoice: sql: no rows in result set", fmt.Sprintf("%+v", withCause), "%+v, for the server side, has the code and the cause")

	pub := withDetail.Public()
	assert.Equal(t, errs.Public{Code: errs.CodeNotFound, Message: "no such invoice", Detail: map[string]any{"id": 7}}, pub, "Public has code, message and detail")
	assert.NotContains(t, fmt.Sprint(pub), "sql:", "Public never holds the cause")
}

func TestErrorDefaultMessageAndInvalidCode(t *testing.T) {
	e := errs.New(errs.CodeNotFound, "")
	assert.Equal(t, "not found", e.Error(), "empty message uses the default in Error")
	assert.Equal(t, "not found", e.Public().Message, "empty message uses the default in Public")

	bad := errs.New("made_up", "")
	pub := bad.Public()
	assert.Equal(t, errs.CodeInternal, pub.Code, "an invalid code is reported as internal")
	assert.Equal(t, errs.GenericMessage, pub.Message, "an invalid code with no message gets the generic message")
}

func TestIsAsThroughWrapping(t *testing.T) {
	secret := errors.New("secret cause")
	e := errs.NotFound("no such invoice").WithCause(secret)
	wrapped := fmt.Errorf("layer 2: %w", fmt.Errorf("layer 1: %w", e))
	joined := errors.Join(io.EOF, wrapped)

	for name, err := range map[string]error{"direct": e, "wrapped": wrapped, "joined": joined} {
		assert.ErrorIs(t, err, errs.NotFound(""), "%s: Is matches any not-found error", name)
		assert.ErrorIs(t, err, errs.NotFound("no such invoice"), "%s: Is matches the same message", name)
		assert.NotErrorIs(t, err, errs.NotFound("other message"), "%s: Is does not match another message", name)
		assert.NotErrorIs(t, err, errs.PermissionDenied(""), "%s: Is does not match another code", name)
		assert.ErrorIs(t, err, secret, "%s: Is sees the private cause", name)
		var target *errs.Error
		require.ErrorAs(t, err, &target, "%s: As finds the *Error", name)
		assert.Equal(t, errs.CodeNotFound, target.Code(), "%s: As gives the *Error", name)
	}
	var nilTarget *errs.Error
	assert.False(t, e.Is(nilTarget), "a typed nil target matches nothing")
	assert.False(t, e.Is(io.EOF), "a non-*Error target matches nothing")
}

func TestNormalizeRules(t *testing.T) {
	secret := "CANARY-db-password"
	raw := errors.New(secret)
	notFound := errs.NotFound("no such row").WithCause(raw)

	cases := []struct {
		name     string
		err      error
		code     errs.Code
		message  string
		scrubbed bool
	}{
		{"nil", nil, "", "", false},
		{"plain", raw, errs.CodeInternal, errs.GenericMessage, true},
		{"wrapped raw", fmt.Errorf("query: %w", raw), errs.CodeInternal, errs.GenericMessage, true},
		{"errs.Error", notFound, errs.CodeNotFound, "no such row", false},
		{"errs.Error wrapped", fmt.Errorf("ctx %s: %w", secret, notFound), errs.CodeNotFound, "no such row", false},
		{"errs.Error joined", errors.Join(raw, notFound), errs.CodeNotFound, "no such row", false},
		{"panic first", errs.NewPanicError(errs.NotFound("x")), errs.CodeInternal, errs.GenericMessage, true},
		{"panic wrapping context", errs.NewPanicError(context.Canceled), errs.CodeInternal, errs.GenericMessage, true},
		{"panic joined with errs.Error", errors.Join(errs.NotFound("x"), errs.NewPanicError(secret)), errs.CodeInternal, errs.GenericMessage, true},
		{"errs.Error wins over context", errs.PermissionDenied("no").WithCause(context.Canceled), errs.CodePermissionDenied, "no", false},
		{"canceled", context.Canceled, errs.CodeCanceled, errs.CodeCanceled.DefaultMessage(), false},
		{"canceled wrapped", fmt.Errorf("%s: %w", secret, context.Canceled), errs.CodeCanceled, errs.CodeCanceled.DefaultMessage(), false},
		{"deadline", context.DeadlineExceeded, errs.CodeTimeout, errs.CodeTimeout.DefaultMessage(), false},
		{"deadline joined", errors.Join(raw, context.DeadlineExceeded), errs.CodeTimeout, errs.CodeTimeout.DefaultMessage(), false},
		{"sql.ErrNoRows unmapped", sql.ErrNoRows, errs.CodeInternal, errs.GenericMessage, true},
	}
	for _, c := range cases {
		pub, scrubbed := errs.Normalize(c.err)
		assert.Equal(t, c.code, pub.Code, "%s: code", c.name)
		assert.Equal(t, c.message, pub.Message, "%s: message", c.name)
		assert.Equal(t, c.scrubbed, scrubbed, "%s: scrubbed", c.name)
		assert.NotContains(t, pub.Message, secret, "%s: the raw text never reaches the public message", c.name)
		if c.err != nil {
			assert.Equal(t, c.code, errs.CodeOf(c.err), "%s: CodeOf agrees with Normalize", c.name)
		}
	}
	assert.Equal(t, errs.CodeInternal, errs.CodeOf(nil), "CodeOf(nil) is internal")
}

func TestNormalizerMapAndGenericMessage(t *testing.T) {
	var mapCalls int
	n := errs.Normalizer{
		Map: func(err error) *errs.Error {
			mapCalls++
			if errors.Is(err, sql.ErrNoRows) {
				return errs.NotFound("no such record")
			}
			return nil
		},
		GenericMessage: "something broke",
	}
	pub, scrubbed := n.Normalize(fmt.Errorf("select: %w", sql.ErrNoRows))
	assert.Equal(t, errs.Public{Code: errs.CodeNotFound, Message: "no such record"}, pub, "Map maps the user's error")
	assert.False(t, scrubbed, "a mapped error is public")

	pub, scrubbed = n.Normalize(errors.New("boom"))
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: "something broke"}, pub, "Map returning nil falls through to the generic message of the normalizer")
	assert.True(t, scrubbed, "unmapped raw errors are scrubbed")

	before := mapCalls
	pub, _ = n.Normalize(errs.PermissionDenied("nope"))
	assert.Equal(t, errs.CodePermissionDenied, pub.Code, "an *Error is applied before Map")
	assert.Equal(t, before, mapCalls, "Map is not consulted when an *Error is in the chain")

	pub, scrubbed = n.Normalize(errs.NewPanicError(sql.ErrNoRows))
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: "something broke"}, pub, "a panic is scrubbed even when Map would map its value")
	assert.True(t, scrubbed, "a panic is scrubbed")

	// Map comes before the context rules.
	ctxMap := errs.Normalizer{Map: func(err error) *errs.Error {
		if errors.Is(err, context.DeadlineExceeded) {
			return errs.Unavailable("slow dependency")
		}
		return nil
	}}
	pub, _ = ctxMap.Normalize(context.DeadlineExceeded)
	assert.Equal(t, errs.CodeUnavailable, pub.Code, "Map is applied before the context rules")

	// A Map that panics (here on a nil *Error's method) maps nothing.
	panicky := errs.Normalizer{Map: func(err error) *errs.Error {
		var e *errs.Error
		return e.WithDetail(map[string]any{"raw": err.Error()})
	}}
	require.NotPanics(t, func() { pub, scrubbed = panicky.Normalize(errors.New("raw CANARY")) }, "a panic in Map stays in Normalize")
	assert.Equal(t, errs.Public{Code: errs.CodeInternal, Message: errs.GenericMessage}, pub, "an error Map panicked on is scrubbed")
	assert.True(t, scrubbed, "an error Map panicked on is scrubbed")
	pub, _ = panicky.Normalize(context.Canceled)
	assert.Equal(t, errs.CodeCanceled, pub.Code, "the context rules still apply after Map panicked")
}

func TestPanicError(t *testing.T) {
	pe := errs.NewPanicError("boom CANARY")
	assert.Equal(t, "panic: boom CANARY", pe.Error(), "Error has the value")
	assert.NotEmpty(t, pe.Stack, "the stack is captured")
	assert.Contains(t, string(pe.Stack), "TestPanicError", "the stack names the caller")
	assert.NotContains(t, pe.Error(), "goroutine", "Error never has the stack")
	assert.Nil(t, pe.Unwrap(), "a non-error value unwraps to nil")

	inner := errors.New("inner")
	pe = errs.NewPanicError(inner)
	assert.Equal(t, "panic: inner", pe.Error(), "an error value's text")
	assert.ErrorIs(t, pe, inner, "an error value is unwrapped")

	var re runtime.Error
	func() {
		defer func() { pe = errs.NewPanicError(recover()) }()
		var m map[string]int
		//lint:ignore SA5000 the nil-map write is the deliberate panic under test
		m["x"] = 1 // assignment to entry in nil map
	}()
	require.ErrorAs(t, pe, &re, "a runtime error panic value is reachable with errors.As")

	pe = errs.NewPanicError(struct{ A string }{"v"})
	assert.Equal(t, "panic: {v}", pe.Error(), "a struct value is formatted with %%v")
}

func TestCheckToolName(t *testing.T) {
	valid := []string{"a", "get_weather", "Tool-1.v2", strings.Repeat("x", 128), "A.B-C_D", "0"}
	for _, name := range valid {
		assert.NoError(t, errs.CheckToolName(name), "%q is a valid tool name", name)
	}
	invalid := map[string]string{
		"":                       "empty",
		strings.Repeat("x", 129): "128",
		"get weather":            `' '`,
		"wetter/heute":           `'/'`,
		"café":                   `'é'`,
		"日本":                     `'日'`,
		"tab\there":              `'\t'`,
	}
	for name, reason := range invalid {
		err := errs.CheckToolName(name)
		var tne *errs.ToolNameError
		require.ErrorAs(t, err, &tne, "%q must be rejected with a *ToolNameError", name)
		assert.Equal(t, name, tne.Name, "the error names the tool")
		assert.Contains(t, tne.Reason, reason, "the reason for %q says what is wrong", name)
		assert.Contains(t, err.Error(), "invalid tool name", "Error text for %q", name)
	}
}

func TestToolSchemaError(t *testing.T) {
	cause := errors.New("unexpected token")
	err := fmt.Errorf("register: %w", &errs.ToolSchemaError{Tool: "search", Schema: errs.SchemaOutput, Err: cause})
	var tse *errs.ToolSchemaError
	require.ErrorAs(t, err, &tse, "As finds the *ToolSchemaError")
	assert.Equal(t, "search", tse.Tool, "tool")
	assert.Equal(t, errs.SchemaOutput, tse.Schema, "schema kind")
	assert.ErrorIs(t, err, cause, "Unwrap gives the cause")
	assert.Equal(t, `tool "search": invalid output schema: unexpected token`, tse.Error(), "Error names tool, schema and cause")
	assert.Equal(t, []errs.SchemaKind{"input", "output", "metadata"}, []errs.SchemaKind{errs.SchemaInput, errs.SchemaOutput, errs.SchemaMeta}, "schema kinds are stable")
}

func TestErrorIsImmutable(t *testing.T) {
	detail := map[string]any{"id": "42", "tags": []any{"a"}, "nested": map[string]any{"k": "v"}}
	sentinel := errs.NotFound("no such invoice").WithDetail(detail)
	detail["id"] = "changed"
	detail["tags"].([]any)[0] = "changed"
	assert.Equal(t, "42", sentinel.Detail()["id"], "WithDetail copies the map in")
	assert.Equal(t, []any{"a"}, sentinel.Detail()["tags"], "deeply")

	got := sentinel.Detail()
	got["id"] = "changed"
	got["nested"].(map[string]any)["k"] = "changed"
	pub := sentinel.Public()
	pub.Detail["id"] = "changed"
	assert.Equal(t, map[string]any{"id": "42", "tags": []any{"a"}, "nested": map[string]any{"k": "v"}}, sentinel.Detail(),
		"what Detail and Public hand out is a copy: a sentinel cannot be changed by an importer")
	assert.Equal(t, errs.CodeNotFound, sentinel.Code(), "Code")
	assert.Equal(t, "no such invoice", sentinel.Message(), "Message")
}

// TestDetailWithholdsErrors: an error value in a public error's detail (or
// in an envelope built with PublicDetail) never crosses to the client: its
// JSON would show its fields.
func TestDetailWithholdsErrors(t *testing.T) {
	e := errs.NotFound("gone").WithDetail(map[string]any{
		"raw":    &fs.PathError{Op: "open", Path: "/srv/CANARY", Err: fs.ErrNotExist},
		"public": errs.Unavailable("try later").WithCause(errors.New("CANARY")),
		"field":  "name",
	})
	b, err := json.Marshal(e.Public())
	require.NoError(t, err)
	assert.NotContains(t, string(b), "CANARY", "no error value's fields in the detail")
	d := e.Detail()
	assert.Equal(t, errs.WithheldDetail, d["raw"], "a raw error is withheld")
	assert.Equal(t, "try later", d["public"], "a public error shows its public message")
	assert.Equal(t, "name", d["field"], "other values stay")
}

// TestErrorfWithholdsRawErrors: a raw error formatted into a public
// message with Errorf never crosses to the client; it becomes the cause.
func TestErrorfWithholdsRawErrors(t *testing.T) {
	raw := errors.New("dial postgres://admin:CANARY@db")
	e := errs.Errorf(errs.CodeUnavailable, "load invoice %s: %v (%w)", "42", raw, errors.New("CANARY two"))
	assert.Equal(t, "load invoice 42: "+errs.WithheldError+" ("+errs.WithheldError+")", e.Error(), "the public message holds no raw text")
	assert.ErrorIs(t, e, raw, "the raw error is the cause")
	assert.Contains(t, errs.Describe(e), "CANARY two", "the server side names both")
	pub := errs.Errorf(errs.CodeNotFound, "lookup: %v", errs.NotFound("no such row"))
	assert.Equal(t, "lookup: no such row", pub.Error(), "a public error's message is public")
	assert.Equal(t, "count 3", errs.Errorf(errs.CodeInvalidArguments, "count %d", 3).Error(), "other arguments as fmt formats them")
}
