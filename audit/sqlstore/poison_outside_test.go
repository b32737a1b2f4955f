package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/toolctx"
)

// hostileValues are values a store may refuse that the other poison tests
// do not use, each put in a row's field: NUL in a _meta key and in text
// columns, a lone surrogate escape, a NUL escape, numbers past numeric's
// range (and past float64's, within it) deep in nested arrays, a number
// encoding/json cannot write, text over an index's limit, invalid UTF-8
// and arguments that are not JSON at all.
var hostileValues = []struct {
	name  string
	apply func(r *audit.Record)
}{
	{"NUL in a _meta key", func(r *audit.Record) { r.ClientMeta = map[string]any{"k\x00ey": "v"} }},
	{"NUL escape in a _meta value", func(r *audit.Record) { r.ClientMeta = map[string]any{"k": "a\x00b"} }},
	{"lone surrogate in arguments", func(r *audit.Record) { r.Arguments = json.RawMessage(`{"s":"\ud800"}`) }},
	{"low surrogate first", func(r *audit.Record) { r.Arguments = json.RawMessage(`{"s":"\udc00\ud800x"}`) }},
	{"NUL escape in arguments", func(r *audit.Record) { r.Arguments = json.RawMessage(`{"s\u0000":"\u0000"}`) }},
	{"1e400 in nested arrays", func(r *audit.Record) { r.Arguments = json.RawMessage(`{"a":[[[1e400,-1e400]],[1e-400]]}`) }},
	{"past numeric in nested arrays", func(r *audit.Record) {
		r.ClientMeta = map[string]any{"a": []any{[]any{json.Number("1e999999")}}}
	}},
	{"past numeric in detail", func(r *audit.Record) {
		r.Detail = map[string]any{"deep": []any{map[string]any{"n": json.Number("-1e-999999")}}}
	}},
	{"a number encoding/json refuses", func(r *audit.Record) { r.ClientMeta = map[string]any{"n": json.Number("1e")} }},
	{"invalid UTF-8 in arguments", func(r *audit.Record) { r.Arguments = json.RawMessage("{\"s\":\"\xff\xfe\"}") }},
	{"invalid UTF-8 in a _meta key", func(r *audit.Record) { r.ClientMeta = map[string]any{"\xc3(": 1} }},
	{"arguments not JSON", func(r *audit.Record) { r.Arguments = json.RawMessage(`{"a":`) }},
	{"NUL and invalid UTF-8 in the message", func(r *audit.Record) { r.Message = "bad\x00\xffmessage" }},
	{"a note with NUL", func(r *audit.Record) { r.Notes = []toolctx.Note{{Key: "k\x00", Value: "\x00\xff"}} }},
	{"over-long subject", func(r *audit.Record) { r.Subject = strings.Repeat("s\u00e9", 200000) }},
	{"over-long session id", func(r *audit.Record) { r.SessionID = randomText(20000) }},
	{"over-long tool", func(r *audit.Record) { r.Tool = randomText(20000) }},
	{"over-long _meta key", func(r *audit.Record) { r.ClientMeta = map[string]any{randomText(50000): true} }},
}

// randomText is n bytes of incompressible printable text.
func randomText(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[mrand.IntN(len(alphabet))]
	}
	return string(b)
}

// TestHostileValuesNeverCostARow puts every hostile value above in rows at
// random positions among good ones, on SQLite and PostgreSQL, through the
// writer directly and through a spool replayed after an outage: every row
// is either in the table or in the fallback with the store's error and
// its call id, Stats agrees, the spool ends empty and the writer still
// writes a row after them.
func TestHostileValuesNeverCostARow(t *testing.T) {
	for _, b := range backends() {
		for _, path := range []string{"direct", "replay"} {
			t.Run(b.name+"/"+path, func(t *testing.T) {
				s, raw := b.open(t)
				const n = 3000
				at := mrand.Perm(n)[:len(hostileValues)]
				rows := rowsWith(n, nil)
				where := map[string]string{}
				for k, i := range at {
					hostileValues[k].apply(&rows[i])
					where[rows[i].CallID] = hostileValues[k].name
				}
				dir := t.TempDir()
				ctx := context.Background()
				fb := &keepSink{}
				var w *audit.Async
				if path == "replay" {
					down := &downOnce{Store: s}
					down.down.Store(true)
					sp, err := audit.OpenSpool(dir, audit.SpoolConfig{FallbackLogger: quiet()})
					require.NoError(t, err)
					w = audit.NewAsync(down, audit.AsyncConfig{Spool: sp, QueueSize: 4096, BatchSize: 256, Fallback: fb,
						FallbackLogger: quiet(), Limits: audit.Limits{ID: -1}, Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
					for i := range rows {
						w.Emit(ctx, rows[i])
					}
					// A row the spool cannot encode is refused on its own;
					// every other row is spooled.
					waitFor(t, "the spool", func() bool { st := w.Stats(); return st.Spooled+st.Refused == n })
					waitFor(t, "retries during the outage", func() bool { return w.Stats().Retried > 0 })
					require.Error(t, w.Close(ctx), "close says rows stay in the spool")
					st := w.Stats()
					assert.Equal(t, st.Refused, st.Fallback, "an outage sends only the rows the spool refused to the fallback: %+v", st)
					assert.Zero(t, st.Dropped)
				}
				sp, err := audit.OpenSpool(dir, audit.SpoolConfig{FallbackLogger: quiet()})
				require.NoError(t, err)
				w = audit.NewAsync(s, audit.AsyncConfig{Spool: sp, QueueSize: 4096, Fallback: fb, FallbackLogger: quiet(), Limits: audit.Limits{ID: -1}})
				if path == "direct" {
					for i := range rows {
						w.Emit(ctx, rows[i])
					}
				}
				inTable := func() int64 { return raw(t, "SELECT COUNT(*) FROM "+s.Table()) }
				waitFor(t, "every row written or refused", func() bool {
					fb.mu.Lock()
					nfb := len(fb.rows)
					fb.mu.Unlock()
					return inTable()+int64(nfb) >= n
				})
				w.Emit(ctx, audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: "after", Tool: "search", Outcome: audit.OutcomeOK})
				waitFor(t, "a row after them", func() bool {
					return raw(t, "SELECT COUNT(*) FROM "+s.Table()+" WHERE call_id = 'after'") == 1
				})
				require.NoError(t, w.Close(ctx), "close: the spool is empty")
				st := w.Stats()
				fb.mu.Lock()
				refused := append([]audit.Record(nil), fb.rows...)
				fb.mu.Unlock()
				t.Logf("%d in the table, %d refused; stats %+v", inTable(), len(refused), st)
				assert.Equal(t, int64(n+1), inTable()+int64(len(refused)), "every row in the table or the fallback")
				assert.Equal(t, inTable(), raw(t, "SELECT COUNT(DISTINCT call_id) FROM "+s.Table()), "each once")
				assert.Zero(t, st.SpoolRows, "the spool is empty")
				assert.Zero(t, st.Dropped, "nothing dropped")
				for _, r := range refused {
					id := r.CallID[:min(len(r.CallID), 6)]
					what, ok := where[r.CallID]
					assert.True(t, ok, "refused row %s is one of the hostile ones", id)
					assert.NotEmpty(t, note(r, audit.NoteRefused), "%s (%s) carries the store's error", id, what)
					assert.Equal(t, int64(0), raw(t, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE call_id = '%s'", s.Table(), r.CallID)),
						"%s (%s) is not also in the table", id, what)
					t.Logf("refused %s (%s): %.160s", id, what, note(r, audit.NoteRefused))
				}
			})
		}
	}
}
