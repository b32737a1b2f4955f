package adapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// testCodec decodes with encoding/json: a message whose "id" is not a
// number or string, or whose "method" is not a string, fails; tools/call
// params need a string "name".
func testCodec() adapter.FrameCodec {
	return adapter.FrameCodec{
		Decode: func(m []byte) (adapter.Envelope, error) {
			var w struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(m, &w); err != nil {
				return adapter.Envelope{}, err
			}
			if len(w.ID) > 0 && w.ID[0] != '"' && (w.ID[0] < '0' || w.ID[0] > '9') {
				return adapter.Envelope{}, errors.New("bad id")
			}
			return adapter.Envelope{Method: w.Method, ID: w.ID, Params: w.Params}, nil
		},
		Params: map[string]func(adapter.Envelope) error{
			"tools/call": func(e adapter.Envelope) error {
				var p struct {
					Name string `json:"name"`
				}
				return json.Unmarshal(e.Params, &p)
			},
		},
	}
}

func TestFrameGuardAnswers(t *testing.T) {
	var logs bytes.Buffer
	g := adapter.NewFrameGuard(&adapter.Config{Name: "t", Logger: slog.New(slog.NewTextHandler(&logs, nil))}, testCodec())
	ctx := context.Background()
	for _, tc := range []struct{ frame, answer string }{
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid request: its params do not match the method's"}}`},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":"x"}`,
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"invalid request: its params do not match the method's"}}`},
		{`{"jsonrpc":"2.0","id":{},"method":"tools/call"}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC 2.0 message this server can read"}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/ca`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not valid JSON"}}`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON-RPC 2.0 message this server can read"}}`},
		{` [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":[]}}]`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"invalid request: its params do not match the method's"}}`},
	} {
		answer, pass := g.CheckFrame(ctx, []byte(tc.frame))
		assert.False(t, pass, tc.frame)
		assert.JSONEq(t, tc.answer, string(answer), tc.frame)
	}
	answer, pass := g.CheckFrame(ctx, []byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":5}}`))
	assert.False(t, pass, "a notification that does not decode is dropped")
	assert.Nil(t, answer, "and not answered")
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		answer, pass := g.CheckFrame(ctx, []byte(f))
		assert.True(t, pass, f)
		assert.Nil(t, answer, f)
	}
	assert.Contains(t, logs.String(), "json: cannot unmarshal number into Go struct field", "the decoder's text is logged")
	assert.Contains(t, logs.String(), "method=tools/call")
}

func TestNewFrameGuardNeedsACodec(t *testing.T) {
	assert.Panics(t, func() { adapter.NewFrameGuard(nil, adapter.FrameCodec{}) })
	c := testCodec()
	c.Params = nil
	assert.Panics(t, func() { adapter.NewFrameGuard(nil, c) })
	require.NotPanics(t, func() { adapter.NewFrameGuard(nil, testCodec()) }, "nil config: the defaults")
}

func TestAppendJSONID(t *testing.T) {
	for _, tc := range []struct {
		id   any
		want string
	}{{int64(-3), `-3`}, {7, `7`}, {1.5, `1.5`}, {"a\"b\xff", `"a\"b\ufffd"`}} {
		b, ok := adapter.AppendJSONID(nil, tc.id)
		assert.True(t, ok)
		assert.Equal(t, tc.want, string(b))
		assert.True(t, json.Valid(b))
	}
	_, ok := adapter.AppendJSONID(nil, struct{}{})
	assert.False(t, ok)
}

// TestNumbersInRange holds NumbersInRange to encoding/json's decoding into
// an any, which refuses a number beyond float64's range.
func TestNumbersInRange(t *testing.T) {
	long := strings.Repeat("9", 400)
	for _, b := range []string{
		`{}`, `{"a":1}`, `[1.5e300,-2,0.25]`, `{"s":"1e999","t":"\"9e999"}`, `1e308`, `1e999`, `-1e999`,
		`{"a":[` + long + `]}`, `{"a":0.` + long + `}`, `{"a":"` + long + `"}`, `{"a":1e-400}`, `[` + strings.Repeat("9", 308) + `]`,
	} {
		var v any
		want := json.Unmarshal([]byte(b), &v) == nil
		if got := adapter.NumbersInRange([]byte(b)); got != want {
			t.Errorf("NumbersInRange(%.40s) = %v, encoding/json decodes it: %v", b, got, want)
		}
	}
}
