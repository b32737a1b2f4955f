package audit

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// TestCountRows: the spool counts a batch's rows without decoding it, and
// gets the count json.Unmarshal gets, whatever the strings hold.
func TestCountRows(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		good bool
	}{
		{`[]`, 0, true},
		{`[{}]`, 1, true},
		{`[{"a":"x,}]{\"},{"},{"b":[1,{"c":[]}],"d":{"e":"]"}}]`, 2, true},
		{`[{"a":"\\"},{"b":"\\\\"}]`, 2, true},
		{`[1,2]`, 0, false},
		{`{"a":1}`, 0, false},
		{`[{"a":"unterminated}]`, 0, false},
		{`[{"a":1}}]`, 0, false},
		{``, 0, false},
	} {
		n, ok := countRows([]byte(tc.in))
		assert.Equal(t, tc.good, ok, "%s: well formed", tc.in)
		if tc.good {
			assert.Equal(t, tc.n, n, "%s: rows", tc.in)
		}
	}
	recs := countBatch(300)
	b, err := json.Marshal(recs)
	require.NoError(t, err)
	var raw []json.RawMessage
	require.NoError(t, json.Unmarshal(b, &raw))
	n, ok := countRows(b)
	require.True(t, ok, "a marshalled batch is well formed")
	assert.Equal(t, len(raw), n, "the count json.Unmarshal gets")
}

// countBatch is n rows whose strings hold what could confuse a scanner.
func countBatch(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Time: time.Now(), Kind: KindTool, CallID: "c" + strconv.Itoa(i), Tool: `t"{[,`, Outcome: OutcomeError,
			Code: errs.CodeInternal, Message: `}],"\` + "\x00\xff" + strconv.Itoa(i), Detail: map[string]any{"k]": []any{"{", 1.5, nil}},
			ClientMeta: map[string]any{`"`: map[string]any{"x": "}"}}, Arguments: json.RawMessage(`{"q":"]["}`),
			Notes: []toolctx.Note{{Key: "attempts", Value: "2"}}}
	}
	return recs
}

// BenchmarkCountRows compares, in one run, counting a 2,048-row batch's rows
// the way OpenSpool does now and the way it did (json.Unmarshal into
// []json.RawMessage).
func BenchmarkCountRows(b *testing.B) {
	payload, err := json.Marshal(countBatch(2048))
	require.NoError(b, err)
	b.Run("countRows", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if n, ok := countRows(payload); !ok || n != 2048 {
				b.Fatal(n, ok)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			var raw []json.RawMessage
			if err := json.Unmarshal(payload, &raw); err != nil || len(raw) != 2048 {
				b.Fatal(err)
			}
		}
	})
}
