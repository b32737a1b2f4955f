package audit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
)

// decodeFrame decodes a frame's payload as Spool.read does.
func decodeFrame(t *testing.T, payload []byte) []Record {
	t.Helper()
	var recs []Record
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&recs), "%s", payload)
	return recs
}

// fullRecord sets every field of a Record to a value that is not zero,
// by reflection, so that a field added to Record and not to the encoder
// shows here.
func fullRecord(t *testing.T) Record {
	var r Record
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeFor[time.Time]():
			f.Set(reflect.ValueOf(time.Date(2026, 12, 2, 5, 30, 0, 123456789, time.UTC)))
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.Set(reflect.ValueOf(json.RawMessage(`{"a":[1,2.5e300,"x"]}`)))
		case f.Type() == reflect.TypeFor[[]toolctx.Note]():
			f.Set(reflect.ValueOf([]toolctx.Note{{Key: "attempts", Value: "2"}, {Key: "k\"", Value: "v\n"}}))
		case f.Kind() == reflect.Map:
			f.Set(reflect.ValueOf(map[string]any{"n": json.Number("1e999999"), "s": name, "l": []any{json.Number("1"), true, nil}}))
		case f.Kind() == reflect.String:
			f.SetString(name + ` <&> "quoted" \ é`)
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			f.SetInt(int64(i + 1))
		default:
			t.Fatalf("Record.%s is a %s: teach appendRecord and this test how to encode it", name, f.Type())
		}
	}
	return r
}

// TestSpoolCodecRoundTripsEveryField: a row with every field set, encoded
// by appendRecords, decodes (as Spool.read decodes a frame) to the same
// row; and to what json.Marshal's encoding decodes to. A field added to
// Record that the encoder does not write fails here.
func TestSpoolCodecRoundTripsEveryField(t *testing.T) {
	in := []Record{fullRecord(t), {}, {Kind: KindHTTP, Status: 200}}
	b, err := appendRecords(nil, in)
	require.NoError(t, err)
	out := decodeFrame(t, b)
	assert.Equal(t, in, out, "every field comes back")

	ref, err := json.Marshal(in)
	require.NoError(t, err)
	want := decodeFrame(t, ref)
	want[1].Arguments, want[2].Arguments = nil, nil // json.Marshal wrote null for none: see appendRecords
	assert.Equal(t, want, out, "what json.Marshal's encoding decodes to")
	n, ok := countRows(b)
	assert.True(t, ok)
	assert.Equal(t, 3, n, "the spool counts its rows on open")
}

// TestSpoolCodecStringsAsEncodingJSON: any string, valid UTF-8 or not,
// decodes from appendJSONString to what it decodes to from json.Marshal.
func TestSpoolCodecStringsAsEncodingJSON(t *testing.T) {
	check := func(s string) bool {
		var mine, theirs string
		ref, _ := json.Marshal(s)
		if err := json.Unmarshal(appendJSONString(nil, s), &mine); err != nil {
			t.Logf("%q: %v", s, err)
			return false
		}
		require.NoError(t, json.Unmarshal(ref, &theirs))
		return mine == theirs
	}
	for _, s := range []string{"", "plain", "\x00\x01\x1f\x7f", "\"\\/", "\xff\xfe", "a\xc3", "\u2028\u2029", "<script>&amp;", "é€𝄞", strings.Repeat("\t\n\r", 3)} {
		assert.True(t, check(s), "%q", s)
	}
	require.NoError(t, quick.Check(check, &quick.Config{MaxCount: 2000}))
	require.NoError(t, quick.Check(func(b []byte) bool { return check(string(b)) }, &quick.Config{MaxCount: 2000}))
}

// TestSpoolCodecRefusesWhatJSONRefuses: a batch json.Marshal could not
// encode (arguments that are not JSON, a value JSON has no form for, a
// year past 9999) fails here too, naming the field, rather than writing a
// frame that cannot be read back.
func TestSpoolCodecRefusesWhatJSONRefuses(t *testing.T) {
	for name, r := range map[string]Record{
		"Arguments":  {Arguments: json.RawMessage(`{"a":`)},
		"Detail":     {Detail: map[string]any{"f": func() {}}},
		"ClientMeta": {ClientMeta: map[string]any{"c": make(chan int)}},
		"Time":       {Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, err := appendRecords(nil, []Record{r})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
		_, err = json.Marshal([]Record{r})
		assert.Error(t, err, "json.Marshal refuses it too: %s", name)
	}
	b, err := appendRecords(nil, []Record{{Arguments: json.RawMessage(" { \"a\" : [ 1 , 2 ] } ")}})
	require.NoError(t, err)
	assert.Equal(t, `{"a":[1,2]}`, string(decodeFrame(t, b)[0].Arguments), "arguments are compacted, as json.Marshal does")
}
