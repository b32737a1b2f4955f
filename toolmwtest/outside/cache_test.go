package outside

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// handlerView is what a tool decoding its arguments with encoding/json
// sees of them: two calls the cache answers alike must look alike here.
func handlerView(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "undecodable"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestCacheFromOutside attacks Cache through both SDKs on every
// transport: identities that collide when their parts are run together
// (subject "a|b" against subject "a" with scope "b", scopes in another
// order, an empty subject against an anonymous caller), anonymous callers
// of two sessions, arguments in other key orders, escapes and number
// forms, results whose size is at and just past the cap for characters
// of every JSON width, several blocks, failures of three kinds; and hit
// and miss in the row and otelmw's counter, call by call.
func TestCacheFromOutside(t *testing.T) {
	each(t, func(t *testing.T, sdk, tr string) {
		otel, reader := meteredOtel(t)
		var kept rows
		var runs atomic.Int64
		const maxItem = 100
		chain := middleware.New(
			audit.Interceptor(audit.EmitterFunc(kept.emit)),
			otel,
			middleware.Normalize(errs.Normalizer{}),
			middleware.Recover,
			identify,
			middleware.Cache(middleware.CacheConfig{TTL: time.Hour, MaxItemBytes: maxItem}),
		)
		c := serve(t, sdk, tr, chain, map[string]tool{
			"echo": {h: toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
				n := runs.Add(1)
				return toolctx.TextResult(fmt.Sprintf("run %d sees %s", n, handlerView(req.Arguments.JSON())))
			})},
			"sized": {h: toolctx.HandlerFunc(func(_ context.Context, req *toolctx.Request) *toolctx.CallResult {
				runs.Add(1)
				var a struct {
					Char   string
					N      int
					Blocks int
				}
				_ = json.Unmarshal(req.Arguments.JSON(), &a)
				res := &toolctx.CallResult{}
				for range max(a.Blocks, 1) {
					res.Content = append(res.Content, &toolctx.Text{Text: strings.Repeat(a.Char, a.N)})
				}
				return res
			})},
			"own-error": {h: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				runs.Add(1)
				return &toolctx.CallResult{IsError: true, Content: []toolctx.Content{&toolctx.Text{Text: "no"}}}
			})},
			"public-error": {h: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				runs.Add(1)
				return toolctx.ErrorResult(errs.Unavailable("down"))
			})},
			"raw-error": {h: toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
				runs.Add(1)
				return toolctx.ErrorResult(errors.New("dial tcp 10.0.0.1:5432: refused"))
			})},
		})
		// ran calls tool and reports whether the handler ran (a miss) and
		// what the caller got; the row and the counter must agree.
		var hits, misses int64
		looked := false // whether the last call was looked up
		ran := func(c *conn, tool, args string, meta map[string]any) (bool, string) {
			t.Helper()
			before := runs.Load()
			a := c.Call(t, tool, args, meta)
			_, texts, _ := a.decoded(t)
			didRun := runs.Load() != before
			rs := kept.take()
			require.Len(t, rs, 1, "one row")
			note, noted := "", false
			for _, n := range rs[0].Notes {
				if n.Key == middleware.NoteCache {
					note, noted = n.Value, true
				}
			}
			looked = noted
			if !noted { // not looked up: it must have run
				assert.True(t, didRun, "%s %s: neither looked up nor run", tool, args)
				return didRun, strings.Join(texts, "|")
			}
			if note == "miss" {
				misses++
				assert.True(t, didRun, "%s %s: a miss runs the handler", tool, args)
			} else {
				hits++
				assert.Equal(t, "hit", note)
				assert.False(t, didRun, "%s %s: a hit does not run the handler", tool, args)
			}
			return didRun, strings.Join(texts, "|")
		}

		// Identities: each is its own partition, but for the two that are
		// the same identity (one scope set in two orders) and the empty
		// identity, which is the anonymous caller's.
		callers := []struct {
			name string
			meta map[string]any
		}{
			{"anonymous", nil},
			{"a|b", withIdentity("a|b")},
			{"a scope b", withIdentity("a", "b")},
			{"a scope b|c", withIdentity("a", "b|c")},
			{"a scopes b c", withIdentity("a", "b", "c")},
			{"a scopes c b", withIdentity("a", "c", "b")},
			{"a|b scope c", withIdentity("a|b", "c")},
			{"a", withIdentity("a")},
			{"empty subject scope a", withIdentity("", "a")},
			{"subject session", withIdentity("session")},
			{"empty subject", withIdentity("")},
		}
		shared := map[string]string{"a scopes c b": "a scopes b c", "empty subject": "anonymous"}
		seen := map[string]string{}
		for _, who := range callers {
			first, got := ran(c, "echo", `{"q":1}`, who.meta)
			assert.True(t, looked, "%s: looked up", who.name)
			if same, ok := shared[who.name]; ok {
				assert.False(t, first, "%s is %s: its entry", who.name, same)
				assert.Equal(t, seen[same], got)
			} else {
				assert.True(t, first, "%s is served no other identity's entry (got %q)", who.name, got)
			}
			seen[who.name] = got
			again, got2 := ran(c, "echo", `{"q":1}`, who.meta)
			assert.False(t, again, "%s: its own entry", who.name)
			assert.Equal(t, got, got2)
		}
		// An anonymous caller of another session is served nothing of this
		// one's.
		if c.again != nil {
			// An anonymous caller of another session is served nothing of
			// this one's, where the transport tells sessions apart (on
			// one without session ids, every anonymous caller is one
			// partition, as CacheConfig says).
			before := runs.Load()
			c.Call(t, "echo", `{"q":1}`, nil)
			mine := kept.take()
			require.Len(t, mine, 1)
			require.Equal(t, before, runs.Load(), "this session's anonymous entry")
			other := c.another(t)
			a := other.Call(t, "echo", `{"q":1}`, nil)
			_, _, _ = a.decoded(t)
			theirs := kept.take()
			require.Len(t, theirs, 1)
			for _, r := range append(mine, theirs...) {
				for _, n := range r.Notes {
					switch {
					case n.Key == middleware.NoteCache && n.Value == "hit":
						hits++
					case n.Key == middleware.NoteCache:
						misses++
					}
				}
			}
			if mine[0].SessionID != "" && theirs[0].SessionID != mine[0].SessionID {
				assert.NotEqual(t, before, runs.Load(), "another session's anonymous caller gets no entry of this session's")
			}
		}

		// Arguments: whatever the cache serves alike, the handler sees
		// alike; key order and escapes are the same call.
		pairs := []struct {
			x, y string
			same bool // known to be one call
		}{
			{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
			{`{"a":"A"}`, `{"a":"\u0041"}`, true},
			{`{"a":{"x":[{"y":null,"z":"é"}]}}`, `{"a":{"x":[{"z":"\u00e9","y":null}]}}`, true},
			{`{"a":1}`, `{"a":1.0}`, false},
			{`{"a":10}`, `{"a":1e1}`, false},
			{`{"a":123456789012345678901234567890}`, `{"a":123456789012345678901234567891}`, false},
			{`{"a":""}`, `{}`, false},
			{`{"a":null}`, `{}`, false},
			{`{"a":[]}`, `{"a":{}}`, false},
			{`{"a":"1"}`, `{"a":1}`, false},
			{`{"a":true}`, `{"a":"true"}`, false},
			{`{"a":"x","b":"y"}`, `{"ab":"xy"}`, false},
			{`{"a\"":"b"}`, `{"a":"\"b"}`, false},
		}
		for i, p := range pairs {
			sub := withIdentity(fmt.Sprintf("args-%d", i))
			_, gx := ran(c, "echo", p.x, sub)
			ranY, gy := ran(c, "echo", p.y, sub)
			if !ranY {
				assert.Equal(t, handlerView([]byte(p.x)), handlerView([]byte(p.y)), "%s and %s were served one entry (%q)", p.x, p.y, gx)
			}
			if p.same {
				assert.False(t, ranY, "%s is %s", p.y, p.x)
				assert.Equal(t, gx, gy)
			}
		}

		// Size: a result at the cap is kept, one character more is not,
		// for characters of every JSON width.
		for i, ch := range []string{"a", "<", "é", "\u2028", `"`, "\n", "😀"} {
			w := jsonWidth(ch)
			for _, blocks := range []int{1, 3} {
				per := maxItem / blocks
				n := (per - 2) / w
				sub := withIdentity(fmt.Sprintf("size-%d-%d", i, blocks))
				at := fmt.Sprintf(`{"Char":%q,"N":%d,"Blocks":%d}`, ch, n, blocks)
				ran(c, "sized", at, sub)
				again, _ := ran(c, "sized", at, sub)
				assert.False(t, again, "%q ×%d in %d blocks (%d bytes) is kept", ch, n, blocks, blocks*(2+n*w))
				over := fmt.Sprintf(`{"Char":%q,"N":%d,"Blocks":%d}`, ch, n+(maxItem-blocks*(2+n*w))/(w*blocks)+1, blocks)
				ran(c, "sized", over, sub)
				again, _ = ran(c, "sized", over, sub)
				assert.True(t, again, "%s is over %d bytes: not kept", over, maxItem)
			}
		}

		// Failures of every kind run every time.
		for _, tool := range []string{"own-error", "public-error", "raw-error"} {
			for range 2 {
				first, _ := ran(c, tool, `{}`, withIdentity("f"))
				assert.True(t, first, "%s is never cached", tool)
			}
		}
		assert.Equal(t, map[string]int64{"hit": hits, "miss": misses}, counterBy(t, reader, "toolmw.cache.lookups", "toolmw.cache.result"), "otelmw counts each lookup as the row says")
	})
}

// jsonWidth is the encoded width of one character in a JSON string.
func jsonWidth(ch string) int {
	switch ch {
	case "<", "\u2028":
		return 6
	case `"`, "\n":
		return 2
	}
	return utf8.RuneLen([]rune(ch)[0])
}
