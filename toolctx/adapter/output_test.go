package adapter_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// TestCheckOutput: a success is validated as its structured content's
// JSON, which CheckOutput returns; no structured content, content that does
// not encode and content the validator refuses are errors; failures and
// input-required rounds are not checked.
func TestCheckOutput(t *testing.T) {
	var seen []string
	validate := func(raw json.RawMessage) error {
		seen = append(seen, string(raw))
		if string(raw) == `{"n":-1}` {
			return errors.New("n must not be negative")
		}
		return nil
	}
	raw, err := adapter.CheckOutput(&toolctx.CallResult{StructuredContent: map[string]any{"n": 1}}, validate)
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":1}`, string(raw))

	_, err = adapter.CheckOutput(&toolctx.CallResult{StructuredContent: map[string]any{"n": -1}}, validate)
	assert.EqualError(t, err, "n must not be negative")

	for _, sc := range []any{nil, json.RawMessage(" ")} {
		_, err = adapter.CheckOutput(&toolctx.CallResult{StructuredContent: sc}, validate)
		assert.ErrorIs(t, err, adapter.ErrNoStructuredContent)
	}
	_, err = adapter.CheckOutput(&toolctx.CallResult{StructuredContent: map[string]any{"c": make(chan int)}}, validate)
	assert.ErrorContains(t, err, "encode the structured content")

	for _, res := range []*toolctx.CallResult{nil, toolctx.ErrorResult(errors.New("x")), {InputRequired: &toolctx.InputRequired{}}} {
		raw, err = adapter.CheckOutput(res, validate)
		assert.NoError(t, err)
		assert.Nil(t, raw)
	}
	assert.Equal(t, []string{`{"n":1}`, `{"n":-1}`}, seen, "validated once each, as JSON")
}
