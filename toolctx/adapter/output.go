package adapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolmw/toolmw/toolctx"
)

// ErrNoStructuredContent is the cause of a success of a tool with an
// output schema that carries no structured content.
var ErrNoStructuredContent = errors.New("the tool has an output schema but returned no structured content")

// StructuredJSON returns structured content as the JSON an output schema
// validates ([EncodeValue]): [ErrNoStructuredContent] for none (nil, or an
// empty json.RawMessage), or why it does not encode.
func StructuredJSON(sc any) (json.RawMessage, error) {
	if raw, ok := sc.(json.RawMessage); sc == nil || ok && len(bytes.TrimSpace(raw)) == 0 {
		return nil, ErrNoStructuredContent
	}
	b, err := EncodeValue(sc)
	if err != nil {
		return nil, fmt.Errorf("encode the structured content: %w", err)
	}
	return b, nil
}

// CheckOutput checks res, the result of a tool with an output schema, as
// the SDKs check a tool's output: a success must carry structured content
// ([StructuredJSON]) that validate, the schema's validator, accepts. It
// returns that content's JSON, encoded once, so that what is sent is what
// was validated; a failure and an input-required round (no output yet)
// return nil and no error.
func CheckOutput(res *toolctx.CallResult, validate func(json.RawMessage) error) (json.RawMessage, error) {
	if res == nil || res.IsError || res.NeedsInput() {
		return nil, nil
	}
	raw, err := StructuredJSON(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	if err := validate(raw); err != nil {
		return nil, err
	}
	return raw, nil
}
