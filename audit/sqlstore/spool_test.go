package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// TestPostgresOutageWithSpoolLosesNothing stops the real server for 10 s
// while 8 goroutines keep calling through the interceptor into the
// recommended configuration (default AsyncConfig with a Spool): calls go on
// during the outage, nothing goes to the fallback or is dropped, and once
// the server is back every row is in the table exactly once.
func TestPostgresOutageWithSpoolLosesNothing(t *testing.T) {
	ctl := os.Getenv("TOOLMW_TEST_PG_CTL")
	if ctl == "" {
		pgDSN(t)
		t.Skip("TOOLMW_TEST_PG_CTL is not set (.ci/run sets it)")
	}
	s, raw := pgBackend().open(t)
	fb := &countSink{}
	sp, err := audit.OpenSpool(t.TempDir(), audit.SpoolConfig{FallbackLogger: quiet()})
	require.NoError(t, err)
	w := audit.NewAsync(s, audit.AsyncConfig{Spool: sp, WriteTimeout: 2 * time.Second, Fallback: fb, FallbackLogger: quiet()})

	pgctl := func(cmd string) {
		// While the server is down, another process's outgoing connection
		// may take its port as an ephemeral one; the port is free again
		// within a minute (TIME_WAIT), so a start is retried that long.
		for try := 0; ; try++ {
			out, err := exec.Command(ctl, cmd).CombinedOutput()
			if err == nil {
				return
			}
			require.Less(t, try, 90, "%s %s: %s", ctl, cmd, out)
			time.Sleep(time.Second)
		}
	}
	started := true
	defer func() {
		if !started { // never leave the server stopped
			_ = exec.Command(ctl, "start").Run()
		}
	}()

	var wg sync.WaitGroup
	var calls atomic.Int64
	stop := make(chan struct{})
	h, err := middleware.New(audit.Interceptor(w), middleware.Recover).ThenFunc(mixedHandler)
	require.NoError(t, err)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				h.CallTool(context.Background(), &toolctx.Request{Tool: loadTools[i%3], CallID: adapter.NewCallID()})
				calls.Add(1)
				time.Sleep(200 * time.Microsecond) // a few thousand calls a second each
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	started = false
	pgctl("stop")
	atStop := calls.Load()
	time.Sleep(10 * time.Second)
	during := calls.Load() - atStop
	pgctl("start")
	started = true
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, w.Close(ctx))
	st := w.Stats()
	t.Logf("calls %d (%d during the 10 s outage); stats %+v", calls.Load(), during, st)
	assert.Greater(t, during, int64(1000), "calls went on while the server was down")
	assert.NotZero(t, st.Spooled, "the outage was absorbed by the spool")
	assert.Equal(t, st.Spooled, st.Replayed, "everything spooled was replayed")
	assert.Zero(t, st.Fallback, "nothing to the fallback")
	assert.Zero(t, fb.n.Load())
	assert.Zero(t, st.Dropped)
	assert.Equal(t, uint64(calls.Load()), st.Written)
	assert.Equal(t, calls.Load(), raw(t, "SELECT COUNT(*) FROM "+s.Table()), "every row in the table")
	assert.Equal(t, calls.Load(), raw(t, "SELECT COUNT(DISTINCT call_id) FROM "+s.Table()), "each exactly once")
}

const childEnv = "TOOLMW_TEST_SPOOL_CHILD"

// slowOnce delays each batch, so that the child is killed mid-replay.
type slowOnce struct{ *sqlstore.Store }

func (s slowOnce) WriteBatchOnce(ctx context.Context, id audit.BatchID, b []audit.Record) error {
	time.Sleep(5 * time.Millisecond)
	return s.Store.WriteBatchOnce(ctx, id, b)
}

// TestSpoolReplayKilledIsExactlyOnce fills a spool with 20,000 rows while
// the store is unreachable, starts a subprocess that replays it into
// PostgreSQL, SIGKILLs it in the middle, and replays the rest from the same
// spool: every row is in the table exactly once.
func TestSpoolReplayKilledIsExactlyOnce(t *testing.T) {
	if dir := os.Getenv(childEnv); dir != "" {
		replayChild(dir, os.Getenv(childEnv+"_TABLE"))
		return
	}
	dsn := pgDSN(t)
	s, raw := pgBackend().open(t)
	dir := t.TempDir()
	const n, batch = 20000, 200
	sp, err := audit.OpenSpool(dir, audit.SpoolConfig{FallbackLogger: quiet()})
	require.NoError(t, err)
	down := audit.SinkFunc(func(context.Context, []audit.Record) error { return errors.New("store unreachable") })
	w := audit.NewAsync(down, audit.AsyncConfig{BatchSize: batch, FlushInterval: time.Millisecond, Backoff: time.Hour,
		Policy: audit.Block, BlockTimeout: time.Minute, Spool: sp, FallbackLogger: quiet()})
	for i := 0; i < n; i++ {
		w.Emit(context.Background(), audit.Record{Time: time.Now(), Kind: audit.KindTool, CallID: fmt.Sprintf("k%d", i),
			Tool: "search", Outcome: audit.OutcomeOK})
		if i%batch == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	require.Error(t, w.Close(context.Background()), "the rows stay in the spool")
	require.Equal(t, uint64(n), w.Stats().Spooled)

	cmd := exec.Command(os.Args[0], "-test.run=^TestSpoolReplayKilledIsExactlyOnce$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, childEnv+"_TABLE="+s.Table(), "TOOLMW_TEST_POSTGRES_DSN="+dsn)
	require.NoError(t, cmd.Start())
	var at int64
	require.Eventually(t, func() bool { at = raw(t, "SELECT COUNT(*) FROM "+s.Table()); return at >= n/4 },
		time.Minute, 2*time.Millisecond, "the child replays")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	killedAt := raw(t, "SELECT COUNT(*) FROM "+s.Table())
	t.Logf("killed the replaying process with %d of %d rows in the table", killedAt, n)
	require.Less(t, killedAt, int64(n), "the kill came in the middle of the replay")

	sp2, err := audit.OpenSpool(dir, audit.SpoolConfig{FallbackLogger: quiet()})
	require.NoError(t, err)
	t.Logf("the spool still holds %d rows (the batches of the replay not yet acknowledged)", sp2.Rows())
	w2 := audit.NewAsync(s, audit.AsyncConfig{Spool: sp2, FallbackLogger: quiet()})
	require.NoError(t, w2.Close(context.Background()))
	assert.Equal(t, int64(n), raw(t, "SELECT COUNT(*) FROM "+s.Table()), "every row")
	assert.Equal(t, int64(n), raw(t, "SELECT COUNT(DISTINCT call_id) FROM "+s.Table()), "exactly once")
	assert.Equal(t, int64(0), raw(t, "SELECT COUNT(*) FROM "+s.Table()+"_batches"), "the ledger forgot the replayed batches")
}

// replayChild replays the spool in dir into table, slowly, until killed.
func replayChild(dir, table string) {
	ctx := context.Background()
	s, err := sqlstore.OpenPostgres(ctx, os.Getenv("TOOLMW_TEST_POSTGRES_DSN"), sqlstore.Config{Table: table})
	if err != nil {
		panic(err)
	}
	sp, err := audit.OpenSpool(dir, audit.SpoolConfig{FallbackLogger: quiet()})
	if err != nil {
		panic(err)
	}
	_ = audit.NewAsync(slowOnce{s}, audit.AsyncConfig{Spool: sp, FallbackLogger: quiet()})
	time.Sleep(time.Minute) // the parent kills us
	os.Exit(3)
}

// TestSpoolOnAFullFilesystem puts the spool on a 256 KB tmpfs with the
// store unreachable: the calls are answered, the rows that do not fit are
// counted as dropped and logged, none reaches the fallback. Needs root (to
// mount); skipped otherwise.
func TestSpoolOnAFullFilesystem(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	sp, err := audit.OpenSpool(filepath.Join(dir, "spool"), audit.SpoolConfig{FallbackLogger: quiet()})
	require.NoError(t, err)
	var logs syncBuf
	fb := &countSink{}
	down := audit.SinkFunc(func(context.Context, []audit.Record) error { return errors.New("store unreachable") })
	w := audit.NewAsync(down, audit.AsyncConfig{BatchSize: 100, FlushInterval: time.Millisecond, Backoff: time.Hour,
		DropLogInterval: 10 * time.Millisecond, Spool: sp, Fallback: fb, FallbackLogger: textLogger(&logs)})
	h, err := middleware.New(audit.Interceptor(w), middleware.Recover).ThenFunc(mixedHandler)
	require.NoError(t, err)
	const n = 5000
	for i := 0; i < n; i++ {
		res := h.CallTool(context.Background(), &toolctx.Request{Tool: "ok", CallID: adapter.NewCallID()})
		require.False(t, res.IsError, "the call is answered")
		if i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	require.Eventually(t, func() bool { return logs.contains("AUDIT ROWS DROPPED") }, time.Minute, 5*time.Millisecond,
		"the drops are logged")
	_ = w.Close(context.Background())
	st := w.Stats()
	t.Logf("%+v", st)
	assert.NotZero(t, st.Dropped, "the full disk dropped rows")
	assert.NotZero(t, st.Spooled, "what fitted was spooled")
	assert.Equal(t, uint64(n), st.Spooled+st.Dropped, "every row spooled or counted as dropped")
	assert.Zero(t, fb.n.Load(), "a full disk is counted as drops, not sent to stderr")
}

// syncBuf is a log buffer safe for concurrent use.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) contains(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.b.String(), sub)
}

func textLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
