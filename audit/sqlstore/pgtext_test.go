package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

func TestPGTextKeepsValidTextAndReplacesTheRest(t *testing.T) {
	assert.Equal(t, "plain 日本語 'quoted'", pgText("plain 日本語 'quoted'"), "valid text passes unchanged")
	assert.Equal(t, "a\uFFFDb", pgText("a\x00b"), "a NUL byte becomes U+FFFD")
	assert.Equal(t, "x\uFFFDy", pgText("x\xffy"), "an invalid byte becomes U+FFFD")
	got := pgText("\x00\xff\xc3\x28")
	assert.True(t, utf8.ValidString(got) && !strings.ContainsRune(got, 0), "the result is storable: %q", got)
}

func TestPGToolIsBoundedOnARuneBoundary(t *testing.T) {
	short := strings.Repeat("t", 128)
	assert.Equal(t, short, pgTool(short), "a registered tool name (at most 128 bytes) is kept whole")
	long := strings.Repeat("é", 2000) // 2 bytes each
	got := pgTool(long)
	assert.LessOrEqual(t, len(got), maxPGTool, "a long unknown tool name is cut to the index's bound")
	assert.True(t, utf8.ValidString(got), "the cut falls on a rune boundary")
}

func TestPGJSONReplacesOnlyRealNULEscapes(t *testing.T) {
	in := []byte(`{"a":"x\u0000y","b":"\\u0000 is text","c":"\\\u0000"}`)
	out := pgJSON(in)
	var v map[string]string
	assert.NoError(t, json.Unmarshal(out, &v), "the output is still JSON: %s", out)
	assert.Equal(t, "x\uFFFDy", v["a"], "an escaped NUL becomes U+FFFD")
	assert.Equal(t, `\u0000 is text`, v["b"], "an escaped backslash followed by u0000 is left alone")
	assert.Equal(t, "\\\uFFFD", v["c"], "a backslash, then an escaped NUL")

	valid := []byte(`{"k":"v"}`)
	assert.Same(t, &valid[0], &pgJSON(valid)[0], "valid JSON without NUL is returned without a copy")
	assert.True(t, utf8.Valid(pgJSON([]byte("\"\xff\""))), "invalid UTF-8 in JSON text is replaced")
}

// TestPGJSONRoundTripThroughJSONB writes arguments, detail and _meta holding
// lone UTF-16 surrogates, invalid UTF-8 and NUL to PostgreSQL: jsonb takes
// every row of the batch, and each reads back as encoding/json reads the
// original (NUL as U+FFFD).
func TestPGJSONRoundTripThroughJSONB(t *testing.T) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	table := fmt.Sprintf("audit_json%d_%d", time.Now().UnixNano(), rand.IntN(1_000_000))
	s, err := OpenPostgres(ctx, dsn, Config{Table: table})
	require.NoError(t, err, "open")
	defer func() {
		_, _ = s.pool.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
		_ = s.Close()
	}()
	args := []string{
		`{"lone high":"\ud800","lone low":"\udc00","pair":"\ud83d\ude00","reversed":"\udc00\ud800"}`,
		`["\ud800\ud800\udc00","\ud800\u0041","\ud800\u0000","\\ud800 is text","\uDBFF\uDFFF"]`,
		`{"\ud800key":"v","nul":"a\u0000b"}`,
		"{\"bytes\":\"\xff\xfe\",\"cut\":\"\xe2\x82\",\"utf8 surrogate\":\"\xed\xa0\x80\",\"ok\":\"\xc3\xa9\"}",
		"[\"\xff\\ud800\\u0000\"]",
	}
	now := time.Now()
	var rows []audit.Record
	for i, a := range args {
		rows = append(rows, audit.Record{Time: now.Add(time.Duration(i) * time.Millisecond), Kind: audit.KindTool,
			CallID: fmt.Sprintf("j%d", i), Tool: "t", Outcome: audit.OutcomeError, Arguments: json.RawMessage(a),
			Detail: map[string]any{"why": "x\xffy\x00z"}, ClientMeta: map[string]any{"k\xfe": "\xed\xa0\x80"}})
	}
	require.NoError(t, s.WriteBatch(ctx, rows), "jsonb takes every row")
	for i, a := range args {
		got, err := s.Query(ctx, Query{CallID: fmt.Sprintf("j%d", i)})
		require.NoError(t, err, "query")
		require.Len(t, got, 1, "row %d", i)
		var want, have any
		require.NoError(t, json.Unmarshal([]byte(a), &want), "the oracle reads %q", a)
		require.NoError(t, json.Unmarshal(got[0].Arguments, &have), "the stored arguments are JSON")
		assert.Equal(t, nulToFFFD(want), have, "arguments %q read back as encoding/json reads them", a)
		assert.Equal(t, map[string]any{"why": "x\uFFFDy\uFFFDz"}, got[0].Detail, "detail")
		assert.Equal(t, map[string]any{"k\uFFFD": "\uFFFD\uFFFD\uFFFD"}, got[0].ClientMeta, "_meta")
	}
}

// nulToFFFD replaces NUL by U+FFFD in every string and key of v.
func nulToFFFD(v any) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, "\x00", "\uFFFD")
	case []any:
		for i := range v {
			v[i] = nulToFFFD(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[strings.ReplaceAll(k, "\x00", "\uFFFD")] = nulToFFFD(e)
		}
		return out
	}
	return v
}
