package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// durabilityStore is where a durability run's demo writes its rows: the
// flags that name it, and a way to list the request ids of its tool rows.
type durabilityStore struct {
	name string
	args []string
	// own are the flags of a store of arm's own next to this one (another
	// file, another table): BenchmarkDurability runs two demos at once.
	own   func(arm string) []string
	ids   func(t testing.TB, kind string) map[string]int // request id -> rows of that kind
	close func()
}

// durabilityStores are SQLite (always) and PostgreSQL (when
// TOOLMW_TEST_POSTGRES_DSN is set).
func durabilityStores(t testing.TB) []durabilityStore {
	dir := t.TempDir()
	db := filepath.Join(dir, "audit.db")
	stores := []durabilityStore{{
		name: "sqlite",
		args: []string{"-audit-db", db},
		own:  func(arm string) []string { return []string{"-audit-db", filepath.Join(dir, arm+".db")} },
		ids: func(t testing.TB, kind string) map[string]int {
			c, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_busy_timeout=10000")
			require.NoError(t, err)
			defer c.Close()
			return requestIDs(t, func(q string) (rowsScanner, error) { return c.Query(q) }, "toolmw_audit", kind)
		},
		close: func() {},
	}}
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		return stores
	}
	table := fmt.Sprintf("toolmw_durability_%d", time.Now().UnixNano())
	ctx := context.Background()
	return append(stores, durabilityStore{
		name: "postgres",
		args: []string{"-audit-postgres", dsn, "-audit-table", table},
		own:  func(arm string) []string { return []string{"-audit-postgres", dsn, "-audit-table", table + "_" + arm} },
		ids: func(t testing.TB, kind string) map[string]int {
			c, err := pgx.Connect(ctx, dsn)
			require.NoError(t, err)
			defer c.Close(ctx)
			return requestIDs(t, func(q string) (rowsScanner, error) { r, err := c.Query(ctx, q); return pgRows{r}, err }, table, kind)
		},
		close: func() {
			if c, err := pgx.Connect(ctx, dsn); err == nil {
				for _, t := range []string{table, table + "_memory", table + "_disk"} {
					_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+t+", "+t+"_schema, "+t+"_batches")
				}
				_ = c.Close(ctx)
			}
		},
	})
}

type rowsScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Close() error { r.Rows.Close(); return nil }

// requestIDs counts the rows of kind ("tool" or "http") of each request id.
func requestIDs(t testing.TB, query func(string) (rowsScanner, error), table, kind string) map[string]int {
	rows, err := query("SELECT request_id FROM " + table + " WHERE kind = '" + kind + "'")
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return map[string]int{}
	}
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		out[id]++
	}
	require.NoError(t, rows.Err())
	return out
}

// load is clients calling the demo in a loop, each call with its own
// X-Request-Id (which its tool row records: the demo runs -stateless, where
// each call's context is its own request's), until stop is closed.
type load struct {
	client   *http.Client
	url      string
	sessions []string
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	answered []string        // request ids of the calls answered
	lat      []time.Duration // their latencies
	sent     []time.Time     // when each was sent: its latency after it, the answer's end
	fails    atomic.Int64
	limit    atomic.Int64 // stop after this many answers (0: no limit)
}

func startLoad(t testing.TB, url string, sessions int) *load {
	l := &load{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sessions}, Timeout: 30 * time.Second},
		url: url, stop: make(chan struct{})}
	for range sessions {
		code, sid, _, err := post(l.client, url, "", initializeBody)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		_, _, _, _ = post(l.client, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		l.sessions = append(l.sessions, sid)
	}
	return l
}

// run starts the sessions' loops.
func (l *load) run() {
	for s, sid := range l.sessions {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				id := fmt.Sprintf("k%02d-%d", s, i)
				start := time.Now()
				ok := l.call(sid, id, fmt.Sprintf(outageCalls[(s+i)%len(outageCalls)], i+2, i))
				d := time.Since(start)
				if !ok {
					l.fails.Add(1)
					continue
				}
				l.mu.Lock()
				l.answered = append(l.answered, id)
				l.lat = append(l.lat, d)
				l.sent = append(l.sent, start)
				n := len(l.answered)
				l.mu.Unlock()
				if lim := l.limit.Load(); lim > 0 && int64(n) >= lim {
					return
				}
			}
		}()
	}
}

// call sends one tools/call and reports whether it was answered with a
// JSON-RPC result.
func (l *load) call(sid, id, body string) bool {
	req, err := http.NewRequest(http.MethodPost, l.url, strings.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("X-Request-Id", id)
	resp, err := l.client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"result"`)
}

func (l *load) answers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answered)
}

func (l *load) halt() {
	close(l.stop)
	l.wg.Wait()
	l.client.CloseIdleConnections()
}

// TestSIGKILLWithDiskDurabilityKeepsEveryRow: the demo with
// -audit-durability disk is killed with SIGKILL while 16 clients call it;
// restarted on the same spool and store, it writes the tool row of every
// call that was answered before the kill (each once): that row was on disk
// before its answer left. And the HTTP row of every request whose response
// ended before an answered call was sent: an HTTP row that follows its
// call's synced row waits for no sync of its own, but it was queued before
// its response ended, so the group commit of any call sent later, which
// that call's answer waited for, took it along. On SQLite, and on
// PostgreSQL when TOOLMW_TEST_POSTGRES_DSN is set.
func TestSIGKILLWithDiskDurabilityKeepsEveryRow(t *testing.T) {
	for _, st := range durabilityStores(t) {
		t.Run(st.name, func(t *testing.T) {
			defer st.close()
			args := append([]string{"-addr", "127.0.0.1:0", "-stateless", "-audit-durability", "disk",
				"-audit-spool", filepath.Join(t.TempDir(), "spool")}, st.args...)
			p := startServer(t, args...)
			l := startLoad(t, serverURL(t, p), 16)
			l.run()
			// Kill it mid-load: once it has answered 2,000 calls, or after
			// 20 s on a very busy machine.
			for deadline := time.Now().Add(20 * time.Second); l.answers() < 2000 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			require.NoError(t, p.cmd.Process.Kill()) // SIGKILL
			<-p.done
			l.halt()
			answered := slices.Clone(l.answered)
			require.NotEmpty(t, answered, "calls were answered before the kill")
			lastSent := slices.MaxFunc(l.sent, time.Time.Compare)
			var synced []string // the requests whose response ended before the last answered call was sent
			for i, id := range answered {
				if l.sent[i].Add(l.lat[i]).Before(lastSent) {
					synced = append(synced, id)
				}
			}
			killed := p

			p = startServer(t, args...)
			serverURL(t, p)
			var missing, missingHTTP []string
			var have, haveHTTP map[string]int
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
				have, haveHTTP = st.ids(t, "tool"), st.ids(t, "http")
				missing, missingHTTP = missing[:0], missingHTTP[:0]
				for _, id := range answered {
					if have[id] == 0 {
						missing = append(missing, id)
					}
				}
				for _, id := range synced {
					if haveHTTP[id] == 0 {
						missingHTTP = append(missingHTTP, id)
					}
				}
				if len(missing)+len(missingHTTP) == 0 || time.Now().After(deadline) {
					break
				}
			}
			require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
			p.wait(t)
			dup := 0
			for _, n := range have {
				if n > 1 {
					dup++
				}
			}
			httpRows := 0
			for _, id := range answered {
				if haveHTTP[id] > 0 {
					httpRows++
				}
			}
			t.Logf("%d calls answered before SIGKILL (%d calls failed at or after the kill); after the restart %d tool rows, %d of the answered missing, %d ids twice; "+
				"HTTP rows for %d of the answered requests, %d of the %d that ended before the last answered call was sent missing",
				len(answered), l.fails.Load(), len(have), len(missing), dup, httpRows, len(missingHTTP), len(synced))
			if len(missing) > 20 {
				missing = missing[:20]
			}
			if len(missingHTTP) > 20 {
				missingHTTP = missingHTTP[:20]
			}
			assert.Empty(t, missing, "every answered call has its row after the restart")
			assert.Empty(t, missingHTTP, "every request that ended before an answered call was sent has its HTTP row after the restart")
			if len(missing)+len(missingHTTP) > 0 {
				// What the writer said: a lost or refused row is logged.
				t.Logf("the killed server's stderr:\n%s\nthe restarted server's stderr:\n%s", killed.stderr, p.stderr)
			}
			assert.Zero(t, dup, "each row once")
		})
	}
}

// durabilityStep is the calls one arm of BenchmarkDurability serves in one
// step: 0.3-0.5 s on the AMD EPYC host, short enough that the two steps of
// a pair see the same machine.
const durabilityStep = 1000

// BenchmarkDurability measures the demo (the binary, stateless streamable
// HTTP, 16 clients calling in a loop, its default SQLite store; PostgreSQL
// too when TOOLMW_TEST_POSTGRES_DSN is set) with -audit-durability memory
// and disk. Two demos run side by side, one per mode, each with its store
// and spool of its own and 16 clients of its own; one op is a pair of
// steps, durabilityStep calls to each demo in turn, in an order drawn at
// random, while the other demo waits. Judged per pair, the ratio cancels
// what the shared machine does to both steps, which demos started one
// after the other do not share: one count a demo, the ratio moved by ±5%
// from count to count (0.73-0.91 in eight counts at load 1-2, 2026-12-03).
// It reports:
//
//   - ratio: the geometric mean of the pairs' disk/memory calls/s, and
//     log-ratio-sd the standard deviation of their logarithms (bench/run's
//     report makes the 95% interval from the two and the number of pairs,
//     against issue 27's 0.8);
//
//   - memory-calls/s and disk-calls/s: each demo's calls over its steps'
//     time; memory-p99-ns and disk-p99-ns: the 99th percentile of its
//     calls' latencies;
//
//   - memory-cpu-µs/call and disk-cpu-µs/call: each demo's CPU time from
//     its start to its exit (the drain included) over its calls.
//
//     cd examples/server && go test -run '^$' -bench '^BenchmarkDurability$' -benchtime 40x
//
// disk makes each call wait for the fsync of its tool row in the spool and
// then of its HTTP row, each shared by the rows queued together (a group
// commit).
func BenchmarkDurability(b *testing.B) {
	for _, st := range durabilityStores(b) {
		b.Run(st.name, func(b *testing.B) { durabilityPairs(b, st) })
		st.close()
	}
}

// durabilityArm is one demo of BenchmarkDurability and its clients.
type durabilityArm struct {
	mode string
	p    *process
	l    *load
	el   time.Duration // its steps' time
}

func durabilityPairs(b *testing.B, st durabilityStore) {
	var arms [2]*durabilityArm
	for i, mode := range []string{"memory", "disk"} {
		args := append([]string{"-addr", "127.0.0.1:0", "-stateless", "-audit-durability", mode,
			"-audit-spool", filepath.Join(b.TempDir(), "spool")}, st.own(mode)...)
		p := startServer(b, args...)
		arms[i] = &durabilityArm{mode: mode, p: p, l: startLoad(b, serverURL(b, p), 16)}
	}
	step := func(a *durabilityArm) float64 {
		n0 := len(a.l.lat)
		a.l.limit.Store(int64(n0 + durabilityStep))
		start := time.Now()
		a.l.run()
		a.l.wg.Wait()
		el := time.Since(start)
		a.el += el
		if f := a.l.fails.Load(); f > 0 {
			b.Fatalf("%s: %d calls failed", a.mode, f)
		}
		return float64(len(a.l.lat)-n0) / el.Seconds()
	}
	rng := rand.New(rand.NewPCG(uint64(b.N), 27))
	var sum, sumSq float64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var rate [2]float64
		first := rng.IntN(2)
		rate[first] = step(arms[first])
		rate[1-first] = step(arms[1-first])
		l := math.Log(rate[1] / rate[0]) // disk over memory
		sum += l
		sumSq += l * l
	}
	b.StopTimer()
	mean := sum / float64(b.N)
	b.ReportMetric(math.Exp(mean), "ratio")
	if b.N > 1 {
		b.ReportMetric(math.Sqrt(max(0, (sumSq-float64(b.N)*mean*mean)/float64(b.N-1))), "log-ratio-sd")
	}
	for _, a := range arms {
		a.l.client.CloseIdleConnections()
		_ = a.p.cmd.Process.Signal(os.Interrupt)
		<-a.p.done
		lat := slices.Clone(a.l.lat)
		slices.Sort(lat)
		b.ReportMetric(float64(len(lat))/a.el.Seconds(), a.mode+"-calls/s")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), a.mode+"-p99-ns")
		if ps := a.p.cmd.ProcessState; ps != nil {
			b.ReportMetric(float64((ps.UserTime()+ps.SystemTime()).Microseconds())/float64(len(lat)), a.mode+"-cpu-µs/call")
		}
	}
}
