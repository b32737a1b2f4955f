package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
)

// keepSink keeps the rows the fallback receives.
type keepSink struct {
	mu   sync.Mutex
	rows []audit.Record
}

func (k *keepSink) WriteBatch(_ context.Context, b []audit.Record) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rows = append(k.rows, b...)
	return nil
}

func (k *keepSink) callIDs() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var ids []string
	for _, r := range k.rows {
		ids = append(ids, r.CallID[:min(len(r.CallID), 6)]) // c00000, without a long id's tail
	}
	slices.Sort(ids)
	return ids
}

// note returns the row's note key's value.
func note(r audit.Record, key string) string {
	for _, n := range r.Notes {
		if n.Key == key {
			return n.Value
		}
	}
	return ""
}

// pgPoisons are three rows PostgreSQL refuses for their data: a JSON
// number outside numeric's range in the arguments and in the client's
// _meta (SQLSTATE 22003), and a call id whose index entry is over the
// btree's limit (54000; the limits are off for it).
func pgPoisons(id func(int) string, at []int) map[int]func(*audit.Record) {
	big := make([]byte, 30000)
	_, _ = rand.Read(big)
	longID := base64.RawURLEncoding.EncodeToString(big) // incompressible
	return map[int]func(*audit.Record){
		at[0]: func(r *audit.Record) { r.Arguments = json.RawMessage(`{"n":1e999999}`) },
		at[1]: func(r *audit.Record) { r.ClientMeta = map[string]any{"n": json.Number("1e-999999")} },
		at[2]: func(r *audit.Record) { r.CallID = id(at[2]) + "-" + longID },
	}
}

// rowsWith makes n rows, call ids c00000..., with the poisons applied.
func rowsWith(n int, poisons map[int]func(*audit.Record)) []audit.Record {
	rows := make([]audit.Record, n)
	now := time.Now()
	for i := range rows {
		rows[i] = audit.Record{Time: now.Add(time.Duration(i) * time.Microsecond), Kind: audit.KindTool,
			CallID: fmt.Sprintf("c%05d", i), Tool: "search", Outcome: audit.OutcomeOK, Arguments: json.RawMessage(`{"q":"x"}`)}
		if p := poisons[i]; p != nil {
			p(&rows[i])
		}
	}
	return rows
}

// waitFor polls cond every 10 ms for at most a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waited a minute for %s", what)
		time.Sleep(10 * time.Millisecond)
	}
}

// poisonPositions returns 3 distinct random positions in [0, n).
func poisonPositions(n int) []int {
	at := mrand.Perm(n)[:3]
	return at
}

// TestPostgresPoisonRowsAreIsolated: 10,000 rows through Async with a
// spool into real PostgreSQL, 3 of them poisoned at random positions (each
// refused for its data in another way): the 9,997 others are in the table
// once each, the 3 are in the fallback with the store's error and their
// call id, Stats counts them, the spool is empty, and the writer still
// takes rows afterwards.
func TestPostgresPoisonRowsAreIsolated(t *testing.T) {
	s, raw := pgBackend().open(t)
	const n = 10000
	at := poisonPositions(n)
	t.Logf("poisoned rows at %v", at)
	fb := &keepSink{}
	sp, err := audit.OpenSpool(t.TempDir(), audit.SpoolConfig{FallbackLogger: quiet()})
	require.NoError(t, err)
	w := audit.NewAsync(s, audit.AsyncConfig{Spool: sp, QueueSize: 16384, Fallback: fb, FallbackLogger: quiet(),
		Limits: audit.Limits{ID: -1}})
	ctx := context.Background()
	rows := rowsWith(n, pgPoisons(func(i int) string { return fmt.Sprintf("c%05d", i) }, at))
	for i := range rows {
		w.Emit(ctx, rows[i])
	}
	waitFor(t, "the batches", func() bool { st := w.Stats(); return st.Written+st.Refused == n })
	w.Emit(ctx, audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: "after", Tool: "search", Outcome: audit.OutcomeOK})
	waitFor(t, "a row after the poison", func() bool { return w.Stats().Written == n-3+1 })
	st := w.Stats()
	require.NoError(t, w.Close(ctx), "close: nothing stays in the spool")
	t.Logf("stats %+v", st)

	assert.Equal(t, int64(n-3+1), raw(t, "SELECT COUNT(*) FROM "+s.Table()), "9,997 rows and the one after")
	assert.Equal(t, int64(n-3+1), raw(t, "SELECT COUNT(DISTINCT call_id) FROM "+s.Table()), "each once")
	assert.Equal(t, uint64(3), st.Refused, "Stats counts the refused rows")
	assert.Equal(t, uint64(3), st.Fallback, "and only them went to the fallback")
	assert.Zero(t, st.Dropped, "nothing dropped")
	assert.Zero(t, st.SpoolRows, "the spool is empty")
	var want []string
	for _, i := range at {
		want = append(want, fmt.Sprintf("c%05d", i))
	}
	slices.Sort(want)
	assert.Equal(t, want, fb.callIDs(), "the fallback has the 3 poisoned rows")
	for _, r := range fb.rows {
		assert.Contains(t, note(r, audit.NoteRefused), "SQLSTATE", "the row carries the store's error")
	}
	for _, i := range at {
		assert.Equal(t, int64(0), raw(t, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE call_id LIKE 'c%05d%%'", s.Table(), i)),
			"the poisoned row %d is not in the table", i)
	}
}

// downOnce is an OnceSink that fails as an outage (not for the data) while
// down is set.
type downOnce struct {
	*sqlstore.Store
	down  atomic.Bool
	calls atomic.Int64
}

var errDown = errors.New("connection refused")

func (d *downOnce) WriteBatch(ctx context.Context, b []audit.Record) error {
	return d.WriteBatchOnce(ctx, audit.BatchID{}, b)
}

func (d *downOnce) WriteBatchOnce(ctx context.Context, id audit.BatchID, b []audit.Record) error {
	d.calls.Add(1)
	if d.down.Load() {
		return errDown
	}
	if id == (audit.BatchID{}) {
		return d.Store.WriteBatch(ctx, b)
	}
	return d.Store.WriteBatchOnce(ctx, id, b)
}

// TestPoisonRowsInTheSpoolAreReplayedAround: while the store is down, the
// batches (poisoned rows among them) are spooled whole, and an outage
// sends nothing to the fallback; a new writer on the same spool directory
// replays them into the store, isolates the poisoned rows, writes every
// other row once and leaves the spool empty. On PostgreSQL (the poisons
// above) and on SQLite (a trigger of the user's that refuses some rows, its
// equivalent: SQLite stores any text or JSON toolmw gives it).
func TestPoisonRowsInTheSpoolAreReplayedAround(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s, raw := b.open(t)
			if b.name == "sqlite" {
				var path string
				s, raw, path = sqliteAt(t)
				addSQLiteTrigger(t, s, path)
			}
			const n = 5000
			at := poisonPositions(n)
			poisons := pgPoisons(func(i int) string { return fmt.Sprintf("c%05d", i) }, at)
			if b.name == "sqlite" {
				poisons = map[int]func(*audit.Record){}
				for _, i := range at {
					poisons[i] = func(r *audit.Record) { r.Tool = "poison" }
				}
			}
			rows := rowsWith(n, poisons)
			dir := t.TempDir()
			ctx := context.Background()

			down := &downOnce{Store: s}
			down.down.Store(true)
			fb := &keepSink{}
			sp, err := audit.OpenSpool(dir, audit.SpoolConfig{FallbackLogger: quiet()})
			require.NoError(t, err)
			w := audit.NewAsync(down, audit.AsyncConfig{Spool: sp, QueueSize: 8192, BatchSize: 512, Fallback: fb,
				FallbackLogger: quiet(), Limits: audit.Limits{ID: -1}, Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
			for i := range rows {
				w.Emit(ctx, rows[i])
			}
			waitFor(t, "the spool", func() bool { return w.Stats().Spooled == n })
			waitFor(t, "retries during the outage", func() bool { return w.Stats().Retried > 0 })
			require.Error(t, w.Close(ctx), "close says rows stay in the spool")
			st := w.Stats()
			assert.Zero(t, st.Fallback+st.Refused+st.Dropped, "an outage is not split into per-row fallbacks: %+v", st)
			assert.Empty(t, fb.callIDs(), "nothing in the fallback")

			sp, err = audit.OpenSpool(dir, audit.SpoolConfig{FallbackLogger: quiet()})
			require.NoError(t, err)
			assert.Equal(t, n, sp.Rows(), "the spool kept every row")
			w = audit.NewAsync(s, audit.AsyncConfig{Spool: sp, Fallback: fb, FallbackLogger: quiet(), Limits: audit.Limits{ID: -1}})
			waitFor(t, "the replay", func() bool { st := w.Stats(); return st.Replayed+st.Refused == n })
			w.Emit(ctx, audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: "after", Tool: "search", Outcome: audit.OutcomeOK})
			require.NoError(t, w.Close(ctx), "close: the spool is empty")
			st = w.Stats()
			t.Logf("poisoned rows at %v; stats %+v", at, st)
			assert.Equal(t, uint64(3), st.Refused, "three refused")
			assert.Zero(t, st.SpoolRows, "the spool is empty")
			assert.Equal(t, int64(n-3+1), raw(t, "SELECT COUNT(*) FROM "+s.Table()), "every other row, and the one after")
			assert.Equal(t, int64(n-3+1), raw(t, "SELECT COUNT(DISTINCT call_id) FROM "+s.Table()), "each once")
			var want []string
			for _, i := range at {
				want = append(want, fmt.Sprintf("c%05d", i))
			}
			slices.Sort(want)
			assert.Equal(t, want, fb.callIDs(), "the fallback has the poisoned rows, once each")
		})
	}
}

// addSQLiteTrigger makes the store's table refuse rows of the tool
// "poison", as a user's own trigger or CHECK would (SQLITE_CONSTRAINT).
func addSQLiteTrigger(t *testing.T, s *sqlstore.Store, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=10000")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TRIGGER ` + s.Table() + `_no_poison BEFORE INSERT ON ` + s.Table() +
		` WHEN NEW.tool = 'poison' BEGIN SELECT RAISE(ABORT, 'poison refused'); END`)
	require.NoError(t, err)
}

// TestSQLiteRefusesTooBigAndTriggers: SQLite's own refusals are marked as
// refused rows (and its outages are not): a value over the length limit
// (SQLITE_TOOBIG) and a trigger's RAISE (SQLITE_CONSTRAINT).
func TestSQLiteRefusesTooBigAndTriggers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	ctx := context.Background()
	s, err := sqlstore.OpenSQLite(ctx, path, sqlstore.Config{})
	require.NoError(t, err)
	defer s.Close()
	addSQLiteTrigger(t, s, path)
	err = s.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, Tool: "poison", Outcome: audit.OutcomeOK}})
	require.ErrorIs(t, err, audit.ErrRowRefused, "a trigger's RAISE: %v", err)
	require.NoError(t, sqlstore.SetSQLiteLengthLimit(ctx, s, 1000), "lower SQLITE_LIMIT_LENGTH")
	err = s.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, Tool: "t", Outcome: audit.OutcomeOK,
		Message: string(make([]byte, 2000))}})
	require.ErrorIs(t, err, audit.ErrRowRefused, "a value over the length limit: %v", err)
	require.NoError(t, s.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, Tool: "t", Outcome: audit.OutcomeOK}}),
		"the others are taken")
	require.NoError(t, s.Close())
	err = s.WriteBatch(ctx, []audit.Record{{Time: time.Now(), Kind: audit.KindTool, Tool: "t", Outcome: audit.OutcomeOK}})
	require.Error(t, err, "a closed store fails")
	assert.NotErrorIs(t, err, audit.ErrRowRefused, "and that is not a refusal")
}

// sqliteAt opens a store in a fresh file and says where.
func sqliteAt(t *testing.T) (*sqlstore.Store, rawDB, string) {
	path := filepath.Join(t.TempDir(), "audit.db")
	s, err := sqlstore.OpenSQLite(context.Background(), path, sqlstore.Config{Table: uniqueTable()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, func(t testing.TB, q string) int64 {
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		require.NoError(t, err)
		defer db.Close()
		var n int64
		require.NoError(t, db.QueryRow(q).Scan(&n))
		return n
	}, path
}
