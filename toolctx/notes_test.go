package toolctx_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

func TestWithNoteCopies(t *testing.T) {
	shared := toolctx.TextResult("ok")
	a := shared.WithNote("cache", "hit")
	b := shared.WithNote("attempts", "2")
	assert.Empty(t, shared.Notes(), "WithNote never changes the result it is called on (a handler may share it)")
	assert.Equal(t, []toolctx.Note{{Key: "cache", Value: "hit"}}, a.Notes(), "the copy has its note")
	assert.Equal(t, []toolctx.Note{{Key: "attempts", Value: "2"}}, b.Notes(), "a sibling copy does not see the other's note")

	c := a.WithNote("scrubbed", "aws_access_key")
	d := a.WithNote("truncated_from_bytes", "900")
	assert.Equal(t, []toolctx.Note{{Key: "cache", Value: "hit"}, {Key: "scrubbed", Value: "aws_access_key"}}, c.Notes(), "notes accumulate in order")
	assert.Equal(t, []toolctx.Note{{Key: "cache", Value: "hit"}, {Key: "truncated_from_bytes", Value: "900"}}, d.Notes(), "appending to one copy never writes into another")
	v, ok := c.Note("scrubbed")
	assert.True(t, ok, "Note finds a key")
	assert.Equal(t, "aws_access_key", v, "Note returns its value")
	_, ok = c.Note("missing")
	assert.False(t, ok, "Note reports a missing key")

	var nilRes *toolctx.CallResult
	assert.Nil(t, nilRes.WithNote("k", "v"), "a nil result stays nil")
	assert.Nil(t, nilRes.Notes(), "a nil result has no notes")
}

func TestNotesSurviveNormalize(t *testing.T) {
	raw := toolctx.ErrorResult(errors.New("CANARY dial tcp 10.0.0.1")).WithNote("attempts", "3")
	out := toolctx.Normalized(context.Background(), raw, errs.Normalizer{})
	require.NotSame(t, raw, out, "a raw failure is replaced")
	assert.Equal(t, []toolctx.Note{{Key: "attempts", Value: "3"}}, out.Notes(), "the replacement keeps the notes")

	bad := &toolctx.CallResult{IsError: true, Error: &errs.Public{Code: "bogus"}}
	out = toolctx.Normalized(context.Background(), bad.WithNote("cache", "hit"), errs.Normalizer{})
	assert.Equal(t, errs.CodeInternal, out.Error.Code, "a repaired envelope")
	assert.Equal(t, []toolctx.Note{{Key: "cache", Value: "hit"}}, out.Notes(), "keeps the notes too")
}

func TestNotesNeverPrinted(t *testing.T) {
	res := toolctx.TextResult("ok").WithNote("scrubbed", "NOTE-CANARY")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, fmt.Sprintf(verb, res), "NOTE-CANARY", "fmt %s shows the public fields only", verb)
	}
}
