package toolctx_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
)

func TestRawArguments(t *testing.T) {
	raw := json.RawMessage(`{"q": "x"}`)
	a := toolctx.RawArguments(raw)
	assert.Equal(t, raw, a.JSON(), "the JSON as given, not compacted")
	assert.Equal(t, len(raw), a.Len())
	var zero toolctx.Arguments
	assert.Nil(t, zero.JSON(), "the zero Arguments are none")
	assert.Equal(t, 0, zero.Len())
	assert.Nil(t, toolctx.DecodedArguments(nil).JSON(), "a nil value is no arguments")
}

// counted is a value whose encoding counts how often it was encoded.
type counted struct{ n *atomic.Int32 }

func (c counted) MarshalJSON() ([]byte, error) {
	c.n.Add(1)
	return []byte(`{"counted":true}`), nil
}

func TestDecodedArgumentsEncodeOnceForEveryCopy(t *testing.T) {
	var n atomic.Int32
	req := toolctx.Request{Tool: "t", Arguments: toolctx.DecodedArguments(counted{&n})}
	assert.Equal(t, int32(0), n.Load(), "nothing is encoded before it is read")
	cp := req // an interceptor's copy
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			assert.JSONEq(t, `{"counted":true}`, string(req.Arguments.JSON()))
			assert.JSONEq(t, `{"counted":true}`, string(cp.Arguments.JSON()))
			assert.Equal(t, len(`{"counted":true}`), cp.Arguments.Len())
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), n.Load(), "encoded once for the request and its copy, read concurrently")
}

func TestDecodedArgumentsThatDoNotEncode(t *testing.T) {
	for name, v := range map[string]any{
		"NaN":      map[string]any{"x": math.NaN()},
		"infinity": []any{math.Inf(-1)},
		"channel":  map[string]any{"c": make(chan int)},
	} {
		a := toolctx.DecodedArguments(v)
		assert.Nil(t, a.JSON(), "%s: a value that does not encode reads as none", name)
		assert.Equal(t, 0, a.Len(), "%s", name)
	}
}

// TestDecodedArgumentsLen holds Len to len(json.Marshal(v)) for random
// values of the shapes it counts without encoding (and a few it encodes),
// with the strings and numbers encoding/json writes specially.
func TestDecodedArgumentsLen(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 2026))
	for i := range 5000 {
		v := randomValue(rng, 0)
		if v == nil {
			continue // no arguments (TestRawArguments)
		}
		want, err := json.Marshal(v)
		require.NoError(t, err)
		a := toolctx.DecodedArguments(v)
		require.Equal(t, len(want), a.Len(), "case %d: %s", i, want)
		require.Equal(t, string(want), string(a.JSON()), "case %d", i)
	}
}

// Strings encoding/json escapes, invalid UTF-8 among them.
var trickyStrings = []string{
	"", "plain", `quote"back\slash`, "<a href='x'>&amp;</a>", "\b\f\n\r\t", "\x00\x01\x1f\x7f",
	"\u2028\u2029", "é中𝄞", "\xff\xfe", "a\xc3", "\xed\xa0\x80", strings.Repeat("x", 300),
}

// Numbers at encoding/json's format boundaries.
var trickyFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789012345678901234.0,
	math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-100, -2.5e-300, 3.14159, 1 << 53, 1e300,
}

func randomValue(rng *rand.Rand, depth int) any {
	k := rng.IntN(10)
	if depth > 3 && k >= 7 {
		k = rng.IntN(7)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return trickyStrings[rng.IntN(len(trickyStrings))]
	case 3:
		return trickyFloats[rng.IntN(len(trickyFloats))] * float64(1-2*rng.IntN(2))
	case 4:
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
	case 5:
		return rng.Int64() >> rng.IntN(64)
	case 6:
		return map[string]string{"not": "counted, encoded"} // a shape Len leaves to encoding/json
	case 7:
		var s []any
		if rng.IntN(5) > 0 {
			s = []any{}
		}
		for range rng.IntN(4) {
			s = append(s, randomValue(rng, depth+1))
		}
		return s
	default:
		if rng.IntN(5) == 0 {
			return map[string]any(nil)
		}
		m := map[string]any{}
		for range rng.IntN(4) {
			m[trickyStrings[rng.IntN(len(trickyStrings))]+string(rune('a'+rng.IntN(26)))] = randomValue(rng, depth+1)
		}
		return m
	}
}

// FuzzDecodedArgumentsLen holds Len to encoding/json for any string.
func FuzzDecodedArgumentsLen(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := map[string]any{s: []any{s, 1.5}}
		want, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Equal(t, len(want), toolctx.DecodedArguments(v).Len())
	})
}

func BenchmarkArguments(b *testing.B) {
	v := map[string]any{"q": "hello", "limit": 10.0, "tags": []any{"a", "b"}}
	b.Run("decoded-len", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = toolctx.DecodedArguments(v).Len()
		}
	})
	b.Run("decoded-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = toolctx.DecodedArguments(v).JSON()
		}
	})
}
