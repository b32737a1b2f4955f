package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
)

// startRedis starts a redis-server of the test's own on a free loopback
// port (the test kills it mid-run, so it cannot be the shared one) and
// returns its URL and the process.
func startRedis(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		bin = "/usr/bin/redis-server"
	}
	require.FileExists(t, bin, "redis-server (Debian's redis-server package; .ci/run installs it)")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "log"))
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	o, err := redis.ParseURL(url)
	require.NoError(t, err)
	c := redis.NewClient(o)
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		require.True(t, time.Now().Before(deadline), "redis-server answers on %s", url)
		time.Sleep(20 * time.Millisecond)
	}
	return url, cmd
}

// fleetCall is one tools/call's answer as a client saw it.
type fleetCall struct {
	tool    string
	ok      bool // a successful result
	code    string
	took    time.Duration
	failure string // no answer: the transport's error, or a status
}

// callFleet posts one tools/call to url and reads the result (JSON or one
// SSE event), within the client's deadline.
func callFleet(client *http.Client, url string, id int, tool, args string) fleetCall {
	start := time.Now()
	status, _, body, err := post(client, url, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	c := fleetCall{tool: tool, took: time.Since(start)}
	if err != nil || status != http.StatusOK {
		c.failure = fmt.Sprintf("status %d, %v", status, err)
		return c
	}
	i := strings.Index(body, `{"jsonrpc"`)
	var msg struct {
		Result *struct {
			IsError bool           `json:"isError"`
			Meta    map[string]any `json:"_meta"`
		} `json:"result"`
	}
	if i < 0 || json.NewDecoder(strings.NewReader(body[i:])).Decode(&msg) != nil || msg.Result == nil {
		c.failure = "no result in " + body
		return c
	}
	c.ok = !msg.Result.IsError
	if m, ok := msg.Result.Meta[toolctx.ErrorMetaKey].(map[string]any); ok {
		c.code, _ = m["code"].(string)
	}
	return c
}

func p99(calls []fleetCall) time.Duration {
	d := make([]time.Duration, len(calls))
	for i, c := range calls {
		d[i] = c.took
	}
	slices.Sort(d)
	if len(d) == 0 {
		return 0
	}
	return d[len(d)*99/100]
}

// TestFleet (issue 26): a real redis-server and three demo replicas as
// separate processes, stateless streamable HTTP, one PostgreSQL table for
// their rows, clients spread over the three. It shows that
//   - the rate limit of L calls per hour admits at most L (+1: the refill
//     of the test's seconds) across the fleet, not 3·L (the demo has no
//     authentication: every client is the one anonymous caller);
//   - the slow tool's bulkhead of K never has more than K calls in flight
//     fleet-wide: N admitted calls of S seconds take at least N·S/K;
//   - a cached result one replica made is served by the others;
//   - with Redis killed mid-run every call is still answered within its
//     deadline, each row noting store=fallback;
//   - every call has exactly one row in PostgreSQL.
//
// It needs TOOLMW_TEST_REDIS_URL (for the redis-server binary it implies)
// and TOOLMW_TEST_POSTGRES_DSN; .ci/run sets both:
//
//	TOOLMW_TEST_REDIS_URL=redis://127.0.0.1:6379/0 TOOLMW_TEST_POSTGRES_DSN=... go test -run TestFleet -v ./examples/server
func TestFleet(t *testing.T) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if os.Getenv("TOOLMW_TEST_REDIS_URL") == "" || dsn == "" {
		t.Skip("needs TOOLMW_TEST_REDIS_URL and TOOLMW_TEST_POSTGRES_DSN (.ci/run sets both)")
	}
	const (
		limit   = 60  // calls per hour, fleet-wide
		k       = 2   // the slow tool's bulkhead
		slowFor = 0.3 // seconds per slow call
	)
	redisURL, redisProc := startRedis(t)
	table := fmt.Sprintf("toolmw_fleet_%d", time.Now().UnixNano())
	ctx := context.Background()
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, dsn)
		if err == nil {
			_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_batches, "+table+"_ledger, "+table+"_meta")
			_ = c.Close(ctx)
		}
	})

	var replicas []*process
	var urls []string
	for i := range 3 {
		p := startServer(t, "-addr", "127.0.0.1:0", "-stateless", "-audit-postgres", dsn, "-audit-table", table,
			"-audit-spool", filepath.Join(t.TempDir(), fmt.Sprint("spool", i)), "-slow-timeout", "20s",
			// A generous store deadline: a busy CI machine must not make
			// the healthy phase fall back (which would count per replica).
			"-redis", redisURL, "-redis-timeout", "500ms",
			"-rate-limit", fmt.Sprintf("%d/1h", limit), "-bulkhead", fmt.Sprint(k), "-cache-ttl", "1m")
		replicas = append(replicas, p)
		urls = append(urls, serverURL(t, p))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	var (
		mu    sync.Mutex
		calls []fleetCall
		ids   atomic.Int64
	)
	// spread runs n calls of tool from clients goroutines, call i on
	// replica i%3, and returns them.
	spread := func(clients, n int, tool, args string) []fleetCall {
		var wg sync.WaitGroup
		var next atomic.Int64
		out := make([]fleetCall, n)
		for range clients {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
					out[i] = callFleet(client, urls[i%3], int(ids.Add(1)), tool, args)
				}
			})
		}
		wg.Wait()
		mu.Lock()
		calls = append(calls, out...)
		mu.Unlock()
		return out
	}
	count := func(cs []fleetCall, ok bool, code string) int {
		n := 0
		for _, c := range cs {
			if c.failure == "" && c.ok == ok && c.code == code {
				n++
			}
		}
		return n
	}
	start := time.Now()

	// The bulkhead: 24 slow calls from 12 clients over the three replicas,
	// while a sampler reads the fleet's slots in Redis.
	rdbOpts, err := redis.ParseURL(redisURL)
	require.NoError(t, err)
	rdb := redis.NewClient(rdbOpts)
	var peakSlots atomic.Int64
	stopSampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(2 * time.Millisecond):
			}
			n, err := rdb.ZCard(ctx, "toolmw:sem:demo-slow\x00").Result()
			if err == nil && n > peakSlots.Load() {
				peakSlots.Store(n)
			}
		}
	})
	bulkStart := time.Now()
	slowCalls := spread(12, 24, "slow", fmt.Sprintf(`{"seconds":%v}`, slowFor))
	bulkTook := time.Since(bulkStart)
	close(stopSampling)
	sampler.Wait()
	require.NoError(t, rdb.Close())
	slowOK := count(slowCalls, true, "")
	require.Equal(t, 24, slowOK, "every slow call got a slot in the end: %+v", slowCalls)
	minTook := time.Duration(float64(slowOK) * slowFor / k * float64(time.Second))
	assert.GreaterOrEqual(t, bulkTook, minTook, "%d calls of %vs with at most %d in flight take at least %v", slowOK, slowFor, k, minTook)
	assert.LessOrEqual(t, peakSlots.Load(), int64(k), "Redis never held more than K slots")

	// The cache: lookup_order of order 1 made once, served by the others.
	orders := []fleetCall{callFleet(client, urls[0], int(ids.Add(1)), "lookup_order", `{"id":1}`)}
	for _, u := range urls[1:] {
		orders = append(orders, callFleet(client, u, int(ids.Add(1)), "lookup_order", `{"id":1}`))
	}
	mu.Lock()
	calls = append(calls, orders...)
	mu.Unlock()
	require.Equal(t, 3, count(orders, true, ""), "order 1 is found: %+v", orders)

	// The rate limit: 3·L greets from 6 clients over the three replicas.
	greets := spread(6, 3*limit, "greet", `{"name":"fleet"}`)
	healthyTook := time.Since(start)
	healthy := append(append(slices.Clone(slowCalls), orders...), greets...)
	admitted := count(healthy, true, "")
	tolerance := 1 + int(float64(limit)*healthyTook.Hours())
	assert.LessOrEqual(t, admitted, limit+tolerance, "at most L (+ the refill) admitted across the fleet")
	assert.GreaterOrEqual(t, admitted, limit, "the whole burst was used")
	assert.Equal(t, len(healthy)-admitted, count(healthy, false, "rate_limited"), "the others were rate limited")

	// Redis killed: every call is answered, within its deadline, by the
	// replicas' own buckets.
	require.NoError(t, redisProc.Process.Signal(syscall.SIGKILL))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(redisURL, "redis://"), "/0")); err != nil {
			break
		} else {
			_ = c.Close()
		}
		require.True(t, time.Now().Before(deadline), "redis-server is gone")
	}
	down := spread(6, 90, "divide", `{"a":1,"b":2}`)
	for _, c := range down {
		require.Empty(t, c.failure, "every call is answered with Redis down")
		assert.Less(t, c.took, client.Timeout, "within its deadline")
	}
	assert.Equal(t, len(down), count(down, true, ""), "the replicas' own buckets admit them (fail open)")

	// Every call's row, exactly once: the replicas flush on SIGINT.
	for _, p := range replicas {
		require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	}
	for _, p := range replicas {
		assert.Zero(t, p.wait(t), "a clean exit")
	}
	db, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer db.Close(ctx)
	var rows, distinct, limited, fallback, downRows, hits int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*), count(DISTINCT call_id),
		count(*) FILTER (WHERE code = 'rate_limited'),
		count(*) FILTER (WHERE notes @> '[{"key":"store","value":"fallback"}]'),
		count(*) FILTER (WHERE tool = 'divide'),
		count(*) FILTER (WHERE notes @> '[{"key":"cache","value":"hit"}]')
		FROM `+table+` WHERE kind = 'tool'`).Scan(&rows, &distinct, &limited, &fallback, &downRows, &hits))
	mu.Lock()
	total := len(calls)
	mu.Unlock()
	assert.Equal(t, total, rows, "a row for every call")
	assert.Equal(t, rows, distinct, "each row once")
	assert.Equal(t, len(healthy)-admitted, limited, "the rate-limited rows")
	assert.Equal(t, len(down), downRows)
	assert.Equal(t, len(down), fallback, "every call with Redis down, and only those, notes store=fallback")
	assert.Equal(t, 2, hits, "two replicas served the third's cached order")

	t.Logf("rate limit: %d of %d calls admitted across 3 replicas, limit %d per hour (+%d tolerance); without Redis each replica would admit %d",
		admitted, len(healthy), limit, tolerance, limit)
	t.Logf("bulkhead: %d slow calls of %vs in %v (at least %v with %d in flight at most); peak slots held in Redis %d, K = %d",
		slowOK, slowFor, bulkTook.Round(time.Millisecond), minTook.Round(time.Millisecond), k, peakSlots.Load(), k)
	t.Logf("p99: Redis healthy %v (%d greets), Redis down %v (%d divides); rows %d, distinct %d, fallback %d; whole test %v; load %s",
		p99(greets).Round(10*time.Microsecond), len(greets), p99(down).Round(10*time.Microsecond), len(down), rows, distinct, fallback,
		time.Since(start).Round(time.Millisecond), loadAverage())
}
