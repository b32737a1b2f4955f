package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// inProcess is the demo server running in the test's own process, so that
// the test can count its goroutines and measure its heap.
type inProcess struct {
	url    string
	stderr *capture
	stop   func() int
}

// startInProcess runs the demo's run() with args over streamable HTTP.
func startInProcess(t *testing.T, args ...string) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &capture{}, &capture{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, strings.NewReader(""), stdout, stderr) }()
	p := &inProcess{stderr: stderr}
	var once sync.Once
	code := 0
	p.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("the in-process server did not stop; stderr:\n%s", stderr)
			}
		})
		return code
	}
	t.Cleanup(func() { p.stop() })
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if out := stdout.String(); strings.Contains(out, "Ctrl-C") {
			m := urlRE.FindStringSubmatch(out)
			require.NotNil(t, m, "no URL in the banner: %q", out)
			p.url = m[1]
			return p
		}
		select {
		case c := <-done:
			t.Fatalf("the server exited early (%d): %s", c, stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no banner; stderr: %s", stderr)
	return nil
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"0"}}}`

// post sends one JSON-RPC message and returns the status, the session id
// the server set and the body.
func post(client *http.Client, url, session, body string) (int, string, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b), err
}

// settle waits until the goroutines are at most want, for 30 s at most,
// and returns the last count.
func settle(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(30 * time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// slack is the goroutines a quiet server may have beyond its baseline
// (connections being torn down, the audit writer's flush).
const slack = 10

// Thousands of initializes: the open sessions stay under -max-sessions (the
// rest get a 503 that says why), and goroutines and heap stay bounded. The
// sessions here never go idle long enough to expire (-session-idle-timeout
// 1h), so how many are open does not depend on how fast the machine opens
// them: exactly the limit, whatever the load. Expiry is
// TestSessionsExpireAndFreeTheLimit's.
func TestSessionFlood(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const maxSessions, initializes, workers = 200, 3000, 8
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startInProcess(t, "-addr", "127.0.0.1:0", "-audit-db", db,
		"-max-sessions", fmt.Sprint(maxSessions), "-session-idle-timeout", "1h")
	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()

	// One session to learn what a session costs, then the baseline.
	code, first, _, err := post(client, p.url, "", initializeBody)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.NotEmpty(t, first, "a stateful session id")
	base := runtime.NumGoroutine()
	heap0 := heapInUse()

	var ok, refused, sent atomic.Int64
	var refusal atomic.Value
	var peak atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sent.Add(1) <= initializes {
				code, _, body, err := post(client, p.url, "", initializeBody)
				if !assert.NoError(t, err) {
					return
				}
				switch code {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusServiceUnavailable:
					refused.Add(1)
					refusal.Store(body)
				default:
					t.Errorf("initialize: HTTP %d %s", code, body)
					return
				}
				if n := int64(runtime.NumGoroutine()); n > peak.Load() {
					peak.Store(n)
				}
			}
		}()
	}
	wg.Wait()
	heapPeak := heapInUse()
	t.Logf("%d initializes: %d sessions opened, %d refused; goroutines %d -> peak %d; heap %d -> %d KiB",
		initializes, ok.Load(), refused.Load(), base, peak.Load(), heap0>>10, heapPeak>>10)
	assert.Equal(t, int64(maxSessions-1), ok.Load(), "sessions open up to the limit (the first is one of them)")
	assert.Equal(t, int64(initializes-maxSessions+1), refused.Load(), "past -max-sessions, every initialize is refused")
	body, _ := refusal.Load().(string)
	assert.Contains(t, body, "limit of 200 open sessions", "the refusal says why: %s", body)
	// Per open session the server holds a few goroutines: the limit bounds them.
	assert.Less(t, peak.Load(), int64(base+maxSessions*4+50), "goroutines are bounded by -max-sessions")
	assert.Less(t, heapPeak, heap0+64<<20, "the heap is bounded by -max-sessions")
	code, _, _, err = post(client, p.url, first, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, "an open session is still served at the limit")
	tr.CloseIdleConnections()
	assert.Equal(t, 0, p.stop())
	assert.Contains(t, p.stderr.String(), "refusing new sessions", "the operator is told")
}

// Sessions that go idle expire after -session-idle-timeout: their
// goroutines and memory are freed, an expired session is not found (404),
// and the slots they held under -max-sessions open to new sessions. The
// test waits on what it checks (a refusal, an expiry), each for a generous
// bound, never on the clock: the limit is small and the idle timeout long
// next to the time an initialize takes even on a busy machine, and filling
// goes on until the limit refuses one.
func TestSessionsExpireAndFreeTheLimit(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const maxSessions = 10
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startInProcess(t, "-addr", "127.0.0.1:0", "-audit-db", db,
		"-max-sessions", fmt.Sprint(maxSessions), "-session-idle-timeout", "3s")
	tr := &http.Transport{}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	base := runtime.NumGoroutine()
	heap0 := heapInUse()

	var first, refusal string
	for i := 0; refusal == "" && i < 2000; i++ {
		code, id, body, err := post(client, p.url, "", initializeBody)
		require.NoError(t, err)
		switch code {
		case http.StatusOK:
			if first == "" {
				first = id
			}
		case http.StatusServiceUnavailable:
			refusal = body
		default:
			require.Failf(t, "initialize", "HTTP %d %s", code, body)
		}
	}
	require.NotEmpty(t, refusal, "the limit refuses an initialize")
	assert.Contains(t, refusal, "limit of 10 open sessions", "the refusal says why")
	require.NotEmpty(t, first)

	// Nothing is sent to the open sessions now (a request would keep its
	// session alive): they go idle and expire, oldest first, each freeing
	// its slot. A new initialize is answered once a slot is free; the
	// maxSessions-th new session means every old one has expired, since
	// an old one expires before any newer one can.
	opened := 0
	var code int
	require.Eventually(t, func() bool {
		var err error
		code, _, _, err = post(client, p.url, "", initializeBody)
		if err == nil && code == http.StatusOK {
			opened++
		}
		return err != nil || opened == maxSessions
	}, time.Minute, 50*time.Millisecond, "new sessions open in the slots the expired ones held (%d opened, last HTTP %d)", opened, code)
	code, _, _, err := post(client, p.url, first, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, code, "an expired session is not found")
	tr.CloseIdleConnections()
	n := settle(base + maxSessions*4 + slack) // only the new sessions' goroutines
	assert.LessOrEqual(t, n, base+maxSessions*4+slack, "the expired sessions' goroutines are gone")
	assert.Less(t, heapInUse(), heap0+8<<20, "the expired sessions' memory is freed")
	tr.CloseIdleConnections()
	assert.Equal(t, 0, p.stop())
}

// 100 clients open their session's SSE stream and are killed mid-stream
// (half close their connection, half reset it): the streams end, the
// sessions expire, and no goroutine is left behind.
func TestKilledSSEClientsLeaveNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const clients = 100
	db := filepath.Join(t.TempDir(), "audit.db")
	p := startInProcess(t, "-addr", "127.0.0.1:0", "-audit-db", db, "-session-idle-timeout", "2s")
	tr := &http.Transport{}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	base := runtime.NumGoroutine()
	addr := hostOf(t, p.url)

	var conns []*net.TCPConn
	var ids []string
	for i := range clients {
		code, id, body, err := post(client, p.url, "", initializeBody)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code, "%s", body)
		code, _, body, err = post(client, p.url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, code, "%s", body)

		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n"+
			"Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n", addr, id)
		require.NoError(t, err)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "client %d's stream", i)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		first := make([]byte, 1)
		_, err = io.ReadFull(resp.Body, first) // the stream's first event: the stream is live
		require.NoError(t, err)
		require.Equal(t, ":", string(first), "an SSE comment opens the stream")
		conns = append(conns, conn.(*net.TCPConn))
		ids = append(ids, id)
	}
	tr.CloseIdleConnections()
	live := runtime.NumGoroutine()
	t.Logf("goroutines: %d before, %d with %d live streams", base, live, clients)
	require.Greater(t, live, base+clients, "each stream holds goroutines")

	for i, c := range conns { // killed: no DELETE, no goodbye
		if i%2 == 0 {
			_ = c.SetLinger(0) // a reset, as from a crashed host
		}
		_ = c.Close()
	}
	n := settle(base + slack)
	assert.LessOrEqual(t, n, base+slack, "no goroutine of the killed clients is left (%d live before)", live)
	code, _, _, err := post(client, p.url, ids[0], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, code, "the killed client's session expired")
	tr.CloseIdleConnections()
	assert.Equal(t, 0, p.stop())
}

// TestStatelessIsNotSessionCapped: on a stateless server no POST opens a
// session that outlives it (a 2026-07-28 client sends none): with
// -max-sessions 1, calls made while another call is in flight are
// answered, not refused as if each opened a session.
func TestStatelessIsNotSessionCapped(t *testing.T) {
	p := startInProcess(t, "-addr", "127.0.0.1:0", "-audit-db", filepath.Join(t.TempDir(), "audit.db"), "-stateless", "-max-sessions", "1")
	cs := connectHTTP(t, p.url)
	defer func() { _ = cs.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var slowDone atomic.Bool
	slowErr := make(chan error, 1)
	go func() {
		defer slowDone.Store(true)
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 2}})
		slowErr <- err
	}()
	overlapping := 0
	for i := 0; i < 200 && !slowDone.Load(); i++ {
		_, err := cs.ListTools(ctx, nil)
		require.NoError(t, err, "a call next to one in flight is answered, not refused by the session cap")
		if !slowDone.Load() {
			overlapping++
		}
	}
	require.NoError(t, <-slowErr, "the slow call is answered too")
	require.Positive(t, overlapping, "at least one call ran while the slow one was in flight")
}
