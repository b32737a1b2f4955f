package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/toolctx"
)

// FullPolicy says what [Async.Emit] does when the queue is full.
type FullPolicy int

const (
	// Drop counts the row as dropped and returns at once: a call never
	// waits on the writer. The default. With a [Spool] the queue fills only
	// when the local disk cannot keep up, not when the store fails.
	Drop FullPolicy = iota
	// Block waits for room in the queue, at most [AsyncConfig.BlockTimeout],
	// then counts the row as dropped.
	Block
)

// String returns "drop" or "block".
func (p FullPolicy) String() string {
	if p == Block {
		return "block"
	}
	return "drop"
}

// Durability says when [Async.Emit] returns.
type Durability int

const (
	// DurabilityMemory: Emit returns once the row is queued in memory. A
	// crash loses the queued rows (at most QueueSize, plus the batch being
	// written); a spooled batch survives a crash of the process (it is
	// fsync'd within a second, and at Close). The default.
	DurabilityMemory Durability = iota
	// DurabilityDisk: Emit returns once the row is durable in the [Spool]
	// (fsync'd; the calls queued together share one fsync, a group
	// commit), so no call is answered without its row on disk: a SIGKILL,
	// a crash or a power loss (on a disk that honours fsync) loses no
	// answered call's row. Every row goes through the spool. Requires
	// [AsyncConfig.Spool].
	//
	// The group commits are parts of one spooled batch, which the store
	// gets in one write once it is closed: at BatchSize rows, every
	// FlushInterval, and at Close. So the store is off the calls' path,
	// as with DurabilityMemory, and a row reaches it as late as it does
	// there (up to FlushInterval after its call); what disk adds to a call
	// is its wait for the spool's fsync. A process killed before the write
	// leaves the batch's parts in the spool, and the next one writes them
	// as one batch, once (an [OnceSink]'s ledger).
	//
	// An HTTP row ([KindHTTP], from [HTTP]) waits too, unless a row
	// emitted on its request's context (its tool call's) waited already:
	// [HTTP] emits it when the handler returns, after the SDK sent that
	// call's answer, so its wait would protect no answer and only cost the
	// call a second fsync in a row. Such a row goes to the disk with the
	// next group commit (another call's, or at the latest FlushInterval
	// later): a SIGKILL or a power loss may lose the HTTP rows of the
	// requests answered just before it, never a tool row of an answered
	// call. A request without such a row (one an HTTP layer answered, a
	// 401 say, or one whose call ran on a context that does not descend
	// from the request's) waits for its HTTP row's fsync before the server
	// ends the response.
	//
	// A group commit the spool cannot take (an I/O error, the spool or
	// the disk full) is written to the store before its Emits return.
	// Only rows neither takes are answered without being durable: they go
	// to the Fallback sink (or are dropped, the spool being full) and are
	// counted in [Stats].NotDurable and logged, as is a row Emit cannot
	// queue (the queue full under Drop) or emits after Close.
	DurabilityDisk
)

// AsyncConfig configures [NewAsync]. The zero value gives the defaults:
// each zero field takes the default its doc names; a negative one is a
// mistake, unless its doc says what it means (MaxRetries).
type AsyncConfig struct {
	// QueueSize is how many rows wait in memory at most. The queue's slots,
	// and room for the two batches being handed over and written, are
	// allocated up front (a few hundred bytes each; a row references only
	// its own bounded copies, see [Limits]). Default 8192.
	QueueSize int
	// BatchSize is how many rows go to the sink in one write at most.
	// Default 2048, at most QueueSize.
	BatchSize int
	// FlushInterval is how often the writer writes what is queued, full
	// batch or not: how long a row waits at most when calls are few.
	// Default 200ms.
	FlushInterval time.Duration
	// Policy is what Emit does when the queue is full. Default [Drop].
	Policy FullPolicy
	// BlockTimeout bounds the wait of [Block]. Default 100ms.
	BlockTimeout time.Duration
	// Durability is when Emit returns. Default [DurabilityMemory].
	Durability Durability
	// Spool is where batches go when the sink fails or is slow, to be
	// replayed into it when it answers again (see [Spool]). The Async owns
	// it and closes it. Without one, a failed write is retried MaxRetries
	// times and then goes to Fallback, and a slow sink fills the queue.
	Spool *Spool
	// MaxRetries, without a Spool, is how many times a failed write is
	// retried before the batch goes to Fallback. Default 5; a negative
	// value retries until Close's context ends. With a Spool a failed batch
	// is spooled at once and its replay is retried until it succeeds.
	MaxRetries int
	// Backoff is the wait before the first retry; it doubles with each
	// retry up to MaxBackoff. Defaults 50ms and 2s.
	Backoff, MaxBackoff time.Duration
	// WriteTimeout bounds one write to the sink. Default 10s.
	WriteTimeout time.Duration
	// Limits cut the rows' client-supplied fields before they are queued.
	// The zero value gives [DefaultLimits].
	Limits Limits
	// Fallback receives the batches that neither the sink nor the spool
	// could take, and rows emitted after Close. It must be safe for
	// concurrent use and fast. Default: a [SlogSink] on FallbackLogger's
	// handler.
	Fallback Sink
	// FallbackLogger is where the writer reports its own troubles: failed
	// writes, drops (at most once per DropLogInterval) and the counters on
	// Close; and, without a Fallback sink, where the rows go that nothing
	// else took. The same knob as [WithFallbackLogger] and
	// middleware.WithFallbackLogger. Default slog.Default().
	FallbackLogger *slog.Logger
	// DropLogInterval is how often dropped rows are reported, at most.
	// Default 10s.
	DropLogInterval time.Duration
}

// check returns what is wrong with cfg, or "": zero fields take their
// defaults, a negative one is a mistake (MaxRetries excepted, whose
// negative value means until Close), as is an unknown Policy or
// Durability (see package middleware's doc, "Knobs").
func (cfg *AsyncConfig) check() string {
	for _, f := range [...]struct {
		name string
		v    int64
	}{
		{"QueueSize", int64(cfg.QueueSize)}, {"BatchSize", int64(cfg.BatchSize)},
		{"FlushInterval", int64(cfg.FlushInterval)}, {"BlockTimeout", int64(cfg.BlockTimeout)},
		{"Backoff", int64(cfg.Backoff)}, {"MaxBackoff", int64(cfg.MaxBackoff)},
		{"WriteTimeout", int64(cfg.WriteTimeout)}, {"DropLogInterval", int64(cfg.DropLogInterval)},
	} {
		if f.v < 0 {
			return "AsyncConfig." + f.name + " must not be negative (zero means the default)"
		}
	}
	if cfg.Policy != Drop && cfg.Policy != Block {
		return fmt.Sprintf("AsyncConfig.Policy %d is neither Drop nor Block", int(cfg.Policy))
	}
	if cfg.Durability != DurabilityMemory && cfg.Durability != DurabilityDisk {
		return fmt.Sprintf("AsyncConfig.Durability %d is neither DurabilityMemory nor DurabilityDisk", int(cfg.Durability))
	}
	return ""
}

// Stats are an [Async]'s counters, in rows.
type Stats struct {
	// Written is how many rows the sink took (directly or replayed).
	Written uint64
	// Spooled is how many rows went to the spool.
	Spooled uint64
	// Replayed is how many rows were written from the spool (they count in
	// Written too).
	Replayed uint64
	// Retried is how many rows were sent to the sink again after a failed
	// write (a batch of n rows retried twice counts 2n).
	Retried uint64
	// Fallback is how many rows went to the fallback sink.
	Fallback uint64
	// Refused is how many rows the sink refused for their data
	// ([ErrRowRefused]): each went to the fallback sink on its own (and
	// counts in Fallback too, or in Dropped when the fallback failed).
	Refused uint64
	// Dropped is how many rows were lost: the queue or the spool was full,
	// or the fallback failed too. Drops are logged.
	Dropped uint64
	// NotDurable is how many rows, with [DurabilityDisk], Emit returned
	// without having made durable: neither the spool nor the store could
	// take them (each went to the fallback sink, or was dropped, and counts
	// there too), or the queue was full, or the writer was closed. Their
	// calls were answered without a row a crash would keep. Logged.
	NotDurable uint64
	// Queued is how many rows wait in the queue now.
	Queued int
	// SpoolRows is how many rows wait in the spool now.
	SpoolRows int
	// SpoolBytes is the size of the spool's files now.
	SpoolBytes int64
}

// LogValue renders the counters for slog.
func (s Stats) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Uint64("written", s.Written), slog.Uint64("spooled", s.Spooled),
		slog.Uint64("replayed", s.Replayed), slog.Uint64("retried", s.Retried),
		slog.Uint64("fallback", s.Fallback), slog.Uint64("refused", s.Refused), slog.Uint64("dropped", s.Dropped),
		slog.Uint64("not_durable", s.NotDurable),
		slog.Int("queued", s.Queued), slog.Int("spool_rows", s.SpoolRows), slog.Int64("spool_bytes", s.SpoolBytes))
}

// Async is an [Emitter] that puts rows in a bounded queue and writes them to
// a [Sink] in batches, by size and interval. A tool call never waits on the
// sink: with a [Spool], a batch that the sink fails to take, or that is
// ready while the sink is still busy with the previous one, goes to the
// spool on local disk and is replayed into the sink, in order, when it
// answers again (exactly once with an [OnceSink]). Counters can be read at
// any time with [Async.Stats].
//
// Emit copies the row into the queue; it allocates only to cut a field
// that is over its [Limits]. Close flushes everything and stops the
// goroutines. Create one with [NewAsync].
type Async struct {
	sink     Sink
	onceSink OnceSink
	spool    *Spool
	cfg      AsyncConfig
	limits   Limits
	q        *ring
	batchDiv divisor       // by BatchSize: the row that fills a batch wakes the dispatcher
	wake     chan struct{} // to the dispatcher: a batch is queued, or a row waits for the disk
	room     chan struct{} // from the dispatcher: it took rows out of the queue (see blockPush)
	direct   chan []Record // to the writer, when it is idle and the spool is empty: a slice of q
	closing  chan struct{}
	dispDone chan struct{}
	done     chan struct{}
	runCtx   context.Context
	abort    context.CancelFunc
	closed   atomic.Bool
	inflight atomic.Int64 // emit calls between their check of closed and their push (the in-place path: see ring.close)
	once     sync.Once
	closeErr error
	waiters  sync.Pool
	run      *runner    // the sink calls of the writer and the dispatcher
	sinkMu   sync.Mutex // held for each call into sink (see writePart)

	written, spooled, replayed, retried, fallback, refused, dropped atomic.Uint64
	notDurable                                                      atomic.Uint64
	droppedLogged                                                   uint64 // the dispatcher's
	spoolFailing                                                    atomic.Bool
}

// NewAsync starts a writer to sink. Call [Async.Close] to flush and stop
// it. A nil sink, [DurabilityDisk] without a spool, a negative duration or
// size in cfg (zero means the default) or an unknown Policy or Durability
// is a construction mistake: NewAsync panics naming it.
func NewAsync(sink Sink, cfg AsyncConfig) *Async {
	if sink == nil {
		panic("audit.NewAsync: nil sink")
	}
	if cfg.Durability == DurabilityDisk && cfg.Spool == nil {
		panic("audit.NewAsync: DurabilityDisk needs AsyncConfig.Spool")
	}
	if err := cfg.check(); err != "" {
		panic("audit.NewAsync: " + err)
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 8192
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 2048
	}
	cfg.BatchSize = min(cfg.BatchSize, cfg.QueueSize)
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 200 * time.Millisecond
	}
	if cfg.BlockTimeout <= 0 {
		cfg.BlockTimeout = 100 * time.Millisecond
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 5
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 50 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	cfg.MaxBackoff = max(cfg.MaxBackoff, cfg.Backoff)
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.DropLogInterval <= 0 {
		cfg.DropLogInterval = 10 * time.Second
	}
	if cfg.FallbackLogger == nil {
		cfg.FallbackLogger = slog.Default()
	}
	if cfg.Fallback == nil {
		cfg.Fallback = NewSlogSink(cfg.FallbackLogger.Handler())
	}
	a := &Async{
		sink:     sink,
		spool:    cfg.Spool,
		cfg:      cfg,
		limits:   cfg.Limits.withDefaults(),
		q:        newRing(cfg.QueueSize, 2*cfg.BatchSize), // room for the batch being written and the one handed over
		wake:     make(chan struct{}, 1),
		room:     make(chan struct{}, 1),
		direct:   make(chan []Record),
		closing:  make(chan struct{}),
		dispDone: make(chan struct{}),
		done:     make(chan struct{}),
	}
	if a.spool != nil {
		a.onceSink, _ = sink.(OnceSink)
		if cfg.Durability == DurabilityDisk {
			a.spool.mu.Lock()
			a.spool.prealloc = true // every call waits for a datasync: make it one that waits for no journal
			a.spool.mu.Unlock()
		}
	}
	a.batchDiv = newDivisor(uint64(cfg.BatchSize))
	a.waiters.New = func() any { return make(chan struct{}, 1) }
	a.run = newRunner(cfg.FallbackLogger)
	a.runCtx, a.abort = context.WithCancel(context.Background())
	go a.dispatch()
	go a.write()
	return a
}

// Emit enqueues r, cut to the limits. Under [Drop] it never waits, and
// counts r as dropped when the queue is full; under [Block] it waits at
// most BlockTimeout for room. With [DurabilityDisk] it then waits until
// the row is on disk. After Close, r goes straight to the fallback sink
// under Block and is counted as dropped under Drop.
func (a *Async) Emit(ctx context.Context, r Record) { a.emit(ctx, &r) }

// emit is Emit without copying the row first: [Interceptor] calls it
// directly.
func (a *Async) emit(ctx context.Context, r *Record) {
	a.limits.apply(r)
	a.ownArguments(r)
	var done chan struct{}
	if a.cfg.Durability == DurabilityDisk && !afterSyncedRow(ctx, r) {
		done = a.waiters.Get().(chan struct{})
	}
	a.inflight.Add(1)
	if a.closed.Load() {
		a.inflight.Add(-1)
		if done != nil {
			a.waiters.Put(done)
			a.notDurable.Add(1)
		}
		a.lateRow(ctx, *r)
		return
	}
	queuedOK := true
	if pos := a.q.push(r, done); pos != 0 {
		if done != nil || a.batchDiv.mod(pos) == 0 {
			a.signal()
		}
	} else {
		a.signal()
		queuedOK = a.cfg.Policy == Block && a.blockPush(r, done)
		if !queuedOK {
			a.dropped.Add(1)
			if done != nil {
				a.notDurable.Add(1)
			}
		}
	}
	a.inflight.Add(-1)
	if done != nil {
		if queuedOK {
			<-done
			synced(ctx, r)
		}
		a.waiters.Put(done)
	}
}

// ownArguments gives r a copy of its arguments: a redactor may return a
// slice of the request's buffer, and a queued row keeps its own, not the
// call's memory.
func (a *Async) ownArguments(r *Record) {
	if len(r.Arguments) > 0 {
		r.Arguments = bytes.Clone(r.Arguments)
	}
}

// reserve returns a zeroed slot of the queue for a row written in place,
// for [Interceptor]; the caller fills the row, cuts it to a.limits, and
// must then call publish whatever happens. It returns
// nil when the row must take emit's way: the writer is closed, the queue
// is full (emit counts the drop, or waits under Block), or the call must
// wait for the disk.
func (a *Async) reserve() (*Record, slot) {
	if a.cfg.Durability == DurabilityDisk {
		return nil, slot{}
	}
	// No count in flight, unlike emit: once Close has closed the ring, no
	// slot is reserved here, and the dispatcher waits for those reserved
	// before (see ring.close).
	if i, pos, ok := a.q.reserve(); ok {
		r := &a.q.rows[i]
		*r = Record{} // the slot holds a released row (see ring.release)
		return r, slot{i, pos}
	}
	return nil, slot{}
}

// slot is a reserved slot of the queue: its index and its position.
type slot struct{ i, pos uint64 }

// publish hands the row reserved in s to the dispatcher (see reserve).
func (a *Async) publish(s slot) {
	a.q.publish(s.i, s.pos)
	if a.batchDiv.mod(s.pos+1) == 0 {
		a.signal()
	}
}

// signal wakes the dispatcher without waiting.
func (a *Async) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// blockPush waits at most BlockTimeout for room in the queue. It sleeps
// until the dispatcher takes rows out of the queue (the room channel)
// rather than polling: a producer that outruns the sink waits without
// waking the scheduler every few microseconds (polling with yields and
// naps cost the writer 2 µs of CPU a row in BenchmarkCeiling/postgres).
// One waiter wakes per signal, and passes it on when there is room left,
// so many blocked calls wake one after the other.
func (a *Async) blockPush(r *Record, done chan struct{}) bool {
	var timer *time.Timer
	for last := false; ; {
		if a.q.push(r, done) != 0 {
			if done != nil {
				a.signal()
			}
			if timer != nil {
				timer.Stop()
			}
			a.passRoom()
			return true
		}
		if last || a.runCtx.Err() != nil {
			return false
		}
		a.signal()
		if timer == nil {
			timer = time.NewTimer(a.cfg.BlockTimeout)
		}
		select {
		case <-a.room:
		case <-timer.C:
			last = true // one more try, then give up
		case <-a.runCtx.Done():
			timer.Stop()
			return false
		}
	}
}

// passRoom wakes the next blocked producer, if any: the queue took a row
// and may have room for more.
func (a *Async) passRoom() {
	select {
	case a.room <- struct{}{}:
	default:
	}
}

// lateRow handles a row emitted after Close: under Drop it is counted as
// dropped (a call never waits on I/O), under Block it goes to the fallback.
func (a *Async) lateRow(ctx context.Context, r Record) {
	if a.cfg.Policy == Drop {
		a.dropped.Add(1)
		return
	}
	batch := [1]Record{r}
	// On the caller's goroutine: the writer's runner is closed.
	a.fallbackVia(context.WithoutCancel(ctx), safeCall, batch[:], errors.New("the writer is closed"))
}

// Stats returns the counters now.
func (a *Async) Stats() Stats {
	st := Stats{
		Written: a.written.Load(), Spooled: a.spooled.Load(), Replayed: a.replayed.Load(),
		Retried: a.retried.Load(), Fallback: a.fallback.Load(), Refused: a.refused.Load(), Dropped: a.dropped.Load(),
		NotDurable: a.notDurable.Load(), Queued: a.q.len(),
	}
	if a.spool != nil {
		st.SpoolRows, st.SpoolBytes = a.spool.Rows(), a.spool.Size()
	}
	return st
}

// Close stops accepting rows, writes every queued row to the sink (or,
// with a spool, to the spool when the sink fails), replays what the spool
// holds while the sink takes it, logs one line saying what became of the
// rows ("toolmw/audit: writer closed: 28 rows written to the store, none
// lost") with the counters, and returns. It returns
// within ctx's deadline: when ctx ends first, the write in progress is
// cancelled, the rows left stay in the spool for the next start (without
// a spool, they go to the fallback), and Close returns an error saying so.
// With a spool and a sink that fails, Close does not wait for it: what is
// spooled stays spooled, and Close returns once one write has failed
// (within WriteTimeout). Close closes the spool. It is idempotent; later
// calls return the first call's result.
func (a *Async) Close(ctx context.Context) error {
	a.once.Do(func() {
		a.q.close() // before closed: a call that finds the ring closed and the writer open still queues its row by emit
		a.closed.Store(true)
		close(a.closing)
		select {
		case <-a.done:
		case <-ctx.Done():
			a.abort()
			<-a.done
			a.closeErr = fmt.Errorf("audit: close: %w", ctx.Err())
		}
		<-a.dispDone
		a.abort()
		a.run.close()
		if a.spool != nil {
			if n := a.spool.Rows(); n > 0 {
				err := fmt.Errorf("audit: close: %d rows stay in the spool %q for the next start", n, a.spool.Dir())
				a.closeErr = errors.Join(a.closeErr, err)
			}
			if err := a.spool.Close(); err != nil {
				a.closeErr = errors.Join(a.closeErr, fmt.Errorf("audit: close: the spool: %w", err))
			}
		} else if a.closeErr != nil {
			a.closeErr = fmt.Errorf("%w; the rows left went to the fallback sink", a.closeErr)
		}
		a.logDrops()
		st := a.Stats()
		a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelInfo, st.closeMessage(), slog.Any("stats", st))
	})
	return a.closeErr
}

// recycle gives a batch's slots back to the queue once it is written,
// spooled or given to the fallback: a batch is a slice of the queue (see
// ring), and nothing may read it after.
func (a *Async) recycle(b []Record) { a.q.release(b) }

// groupYields is how many more times, at most, the dispatcher yields
// before a group commit under DurabilityDisk while calls keep queueing
// rows: each yield lets the calls that are runnable queue theirs, and the
// window closes at the first yield during which none did. On 2 busy cores
// one yield left about 6 rows per fdatasync at the demo's load, and each
// fdatasync costs some 40-80 µs of CPU (the virtual disk, the threads'
// hand-offs around the blocking call): the rows a yield gathers share one.
const groupYields = 3

// dispatch takes rows from the queue into batches and hands each to the
// writer goroutine or the spool.
func (a *Async) dispatch() {
	defer close(a.dispDone)
	var batch []Record // a slice of the queue (see ring)
	var waiters []chan struct{}
	full := false // batch reaches the queue's last slot: the next rows start a batch of their own
	flush := func() {
		if len(batch) > 0 {
			a.handOff(batch, waiters)
			batch, full = nil, false
			waiters = waiters[:0]
		}
	}
	// fill takes what is queued now, up to a batch.
	fill := func() {
		n := len(batch)
		batch, waiters, full = a.q.take(batch, waiters, a.cfg.BatchSize)
		if len(batch) > n {
			a.passRoom() // a blocked Emit can push now
		}
		full = full || len(batch) >= a.cfg.BatchSize
	}
	disk := a.cfg.Durability == DurabilityDisk
	tick := time.NewTicker(a.cfg.FlushInterval)
	defer tick.Stop()
	logTick := time.NewTicker(a.cfg.DropLogInterval)
	defer logTick.Stop()
	syncTick := time.NewTicker(time.Second) // spooled batches reach the disk within a second
	defer syncTick.Stop()
	for {
		select {
		case <-a.wake:
			if disk {
				// A group commit's window: the calls that are about to emit
				// (runnable, or running on the other core) get to queue
				// their rows before the sync, which they then share, instead
				// of waiting for this one and then syncing on their own.
				runtime.Gosched()
				for n, i := a.q.len(), 0; i < groupYields; i++ {
					runtime.Gosched()
					m := a.q.len()
					if m == n {
						break // no call queued a row during the last yield: the group is complete
					}
					n = m
				}
			}
			for fill(); full; fill() {
				flush()
			}
			if disk {
				flush() // group commit of what is queued now
			}
		case <-tick.C:
			fill()
			flush()
			if disk {
				a.spool.closeBatch() // the group commits since the last tick go to the store together
			}
		case <-logTick.C:
			a.logDrops()
		case <-syncTick.C:
			if a.spool != nil && !disk {
				if err := a.spool.sync(); err != nil {
					a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelError, "toolmw/audit: spool fsync failed",
						slog.String("error", err.Error()))
				}
			}
		case <-a.closing:
			for {
				fill()
				flush()
				if a.inflight.Load() == 0 && a.q.len() == 0 {
					if disk {
						a.spool.closeBatch()
					}
					return
				}
				time.Sleep(50 * time.Microsecond) // an Emit is between its check and its send
			}
		}
	}
}

// logDrops reports the rows dropped since the last report. The dispatcher
// calls it once per DropLogInterval, and Close once at the end.
func (a *Async) logDrops() {
	d := a.dropped.Load()
	if d == a.droppedLogged {
		return
	}
	a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelError, "toolmw/audit: AUDIT ROWS DROPPED",
		slog.Uint64("rows", d-a.droppedLogged), slog.Uint64("total", d),
		slog.String("why", "the queue or the spool was full; see Stats"))
	a.droppedLogged = d
}

// handOff sends a full or timed-out batch on: to the writer when it is
// idle and nothing is spooled, else to the spool. Without a spool it waits
// for the writer.
func (a *Async) handOff(batch []Record, waiters []chan struct{}) {
	if a.spool == nil {
		select {
		case a.direct <- batch:
		case <-a.runCtx.Done(): // Close gave up: nobody writes any more
			a.toFallback(context.Background(), batch, a.runCtx.Err())
			a.recycle(batch)
		}
		return
	}
	if a.cfg.Durability != DurabilityDisk && a.spool.empty() {
		select {
		case a.direct <- batch:
			return
		default: // the writer is busy: the sink is slower than the calls
		}
	}
	var spooled []Record
	var err error
	if a.cfg.Durability == DurabilityDisk {
		spooled, err = a.spoolKept(batch, func(recs []Record) error {
			return a.spool.addPart(recs, a.cfg.BatchSize) // a group commit
		})
		if err != nil && len(spooled) > 0 {
			// The spool failed or is full: the calls wait for the store
			// instead, and what it does not take is not durable.
			spooled = a.storeNow(spooled, err)
		}
	} else {
		var id BatchID
		if id, err = a.spool.nextID(); err == nil {
			spooled, err = a.spoolAdd(id, batch, false)
		}
	}
	if len(spooled) > 0 {
		a.spooledOrLost(spooled, err)
	}
	a.recycle(batch) // the spool keeps a copy
	for _, w := range waiters {
		w <- struct{}{}
	}
}

// storeNow writes a group commit the spool could not take (cause) to the
// store, once, before its calls' Emit return: with [DurabilityDisk] a row
// in the store is as durable as one in the spool. It returns the rows the
// store did not take either (nil when it took them all), which are counted
// as not durable and logged: their calls are answered without a row a
// crash would keep.
func (a *Async) storeNow(rows []Record, cause error) []Record {
	var idp *BatchID
	if id, err := a.spool.nextID(); err == nil {
		idp = &id // written once, whatever a retry of a lost commit does
	}
	left := wholeBatch(len(rows))
	_, err := a.writeParts(&left, rows, idp, false)
	if err == nil {
		a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelWarn,
			"toolmw/audit: the spool cannot take a group commit; its rows were written to the store before their calls were answered",
			slog.Int("rows", len(rows)), slog.String("error", cause.Error()))
		return nil
	}
	rest := left.of(rows)
	a.notDurable.Add(uint64(len(rest)))
	a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelError,
		"toolmw/audit: AUDIT ROWS NOT DURABLE: neither the spool nor the store took them; their calls are answered without them",
		slog.Int("rows", len(rest)), slog.String("spool_error", cause.Error()), slog.String("store_error", err.Error()))
	return rest
}

// spoolAdd adds batch to the spool and returns the rows it spooled. A row
// the spool cannot encode (a value encoding/json would refuse: arguments that
// are not JSON, a json.Number that is not a number) is refused on its own,
// as a row a store refuses for its data, and the others are spooled: one
// such row no longer sends its whole batch to the fallback.
func (a *Async) spoolAdd(id BatchID, batch []Record, fsync bool) ([]Record, error) {
	return a.spoolKept(batch, func(recs []Record) error { return a.spool.add(id, recs, fsync) })
}

// spoolKept runs add (a spool write) on batch and, when the spool cannot
// encode a row of it, refuses each such row alone and runs add on the
// others: spoolAdd's rule, for a batch and for a group commit alike.
func (a *Async) spoolKept(batch []Record, add func([]Record) error) ([]Record, error) {
	err := add(batch)
	if !errors.Is(err, errSpoolEncode) {
		return batch, err
	}
	kept := make([]Record, 0, len(batch))
	for i := range batch {
		if _, eerr := encodeFrame(nil, batch[i:i+1]); eerr != nil {
			a.refuse(batch[i], fmt.Errorf("audit: spool: cannot encode the row: %w", eerr))
			continue
		}
		kept = append(kept, batch[i])
	}
	if len(kept) == 0 {
		return kept, nil
	}
	return kept, add(kept)
}

// spooledOrLost accounts for a batch given to the spool: spooled, dropped
// (the spool is full) or sent to the fallback (the spool failed).
func (a *Async) spooledOrLost(batch []Record, err error) {
	n := uint64(len(batch))
	switch {
	case err == nil:
		a.spooled.Add(n)
		if a.spoolFailing.Swap(false) {
			a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelInfo, "toolmw/audit: the spool takes rows again")
		}
	case errors.Is(err, ErrSpoolFull):
		a.dropped.Add(n)
	default:
		if !a.spoolFailing.Swap(true) {
			a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelError, "toolmw/audit: the spool failed",
				slog.String("error", err.Error()))
		}
		a.toFallback(context.Background(), batch, err)
	}
}

// write is the writer goroutine: it replays the spool, oldest batch first,
// and writes the batches handed to it directly.
func (a *Async) write() {
	defer close(a.done)
	closing := false
	wrote := 0
	var forgot time.Time
	for {
		if a.spool != nil {
			e, recs, ok, err := a.spool.peek()
			if err != nil {
				a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelError, "toolmw/audit: a spooled batch cannot be read; it is skipped",
					slog.Int("rows", e.rows), slog.String("error", err.Error()))
				a.dropped.Add(uint64(e.rows))
				_ = a.spool.ack(e)
				continue
			}
			if ok {
				a.spool.prefetch() // the next batch is read while this one is written
				if !a.replay(e, recs, closing) {
					return // Close gave up, or the sink failed during Close: the rest stays spooled
				}
				// The ledger is trimmed every 256 batches, and when the
				// spool is empty at most once a second (with DurabilityDisk
				// it empties after nearly every batch).
				if wrote++; wrote%256 == 0 || (a.spool.empty() && time.Since(forgot) >= time.Second) {
					a.forget()
					forgot = time.Now()
				}
				continue
			}
		}
		var notify chan struct{}
		if a.spool != nil {
			notify = a.spool.notify
		}
		dispDone := a.dispDone
		if closing {
			dispDone = nil
		}
		select {
		case b := <-a.direct:
			a.writeDirect(b)
			if wrote++; wrote%256 == 0 {
				a.forget()
			}
		case <-notify:
		case <-dispDone:
			closing = true // the dispatcher sends nothing more
		}
		if closing && (a.spool == nil || a.spool.empty()) {
			select {
			case b := <-a.direct: // cannot happen once the dispatcher is done; kept for safety
				a.writeDirect(b)
				continue
			default:
			}
			return
		}
	}
}

// replay writes a spooled batch, retrying until the sink takes it (or,
// during Close, once). It reports whether the batch was written. A batch
// the sink refuses for the data of a row is split to find the row (see
// [ErrRowRefused]): the parts written stay written while an outage is
// retried, and a part is written once with an [OnceSink] whatever
// happens, since its id names where it starts in the batch.
func (a *Async) replay(e *entry, recs []Record, closing bool) bool {
	id := BatchID{Spool: a.spool.ID(), Seq: e.seq, First: e.first}
	left := wholeBatch(len(recs))
	wait := a.cfg.Backoff
	sawRefusal := false
	for attempt := 0; ; attempt++ {
		refused := a.refused.Load()
		answered, err := a.writeParts(&left, recs, &id, true)
		if answered {
			wait = a.cfg.Backoff // the sink answers: a new outage backs off from the start
		}
		if a.refused.Load() != refused {
			sawRefusal = true
		}
		if err == nil {
			if err := a.spool.ack(e); err != nil {
				a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelError, "toolmw/audit: spool", slog.String("error", err.Error()))
			}
			if sawRefusal {
				// The batch's frame leaves the disk with its segment as
				// soon as the batches before it are written, so that a
				// crash does not replay it (see ErrRowRefused).
				if err := a.spool.seal(); err != nil {
					a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelError, "toolmw/audit: spool", slog.String("error", err.Error()))
				}
			}
			if attempt > 0 {
				a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelInfo, "toolmw/audit: the sink answers again; replaying the spool",
					slog.Int("spool_rows", a.spool.Rows()))
			}
			return true
		}
		if a.runCtx.Err() != nil || closing {
			return false
		}
		if attempt == 0 {
			a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelWarn, "toolmw/audit: sink write failed; rows stay in the spool and are retried",
				slog.Int("rows", left.rows()), slog.Int("spool_rows", a.spool.Rows()), slog.String("error", err.Error()))
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-a.runCtx.Done():
			t.Stop()
			return false
		case <-a.dispDone: // Close: one more attempt, then the batch stays spooled for the next start
			t.Stop()
			closing = true
		}
		a.retried.Add(uint64(left.rows()))
		wait = min(2*wait, a.cfg.MaxBackoff)
	}
}

// part is the rows [lo, hi) of a batch.
type part struct{ lo, hi int }

// parts is what is left to write of a batch, a stack whose last part is
// written next. It starts as the whole batch; a part the sink refuses for
// its data is replaced by its two halves, and a refused single row leaves
// it for the fallback sink. Bisection finds k refused rows of n in about
// 2k·log2(n) writes, each on fewer rows, and writes every other row.
type parts []part

func wholeBatch(n int) parts { return parts{{0, n}} }

// of returns the rows of batch that p holds, in the batch's order: batch
// itself when p is the whole of it.
func (p parts) of(batch []Record) []Record {
	if len(p) == 1 && p[0] == (part{0, len(batch)}) {
		return batch
	}
	rest := make([]Record, 0, p.rows())
	for i := len(p) - 1; i >= 0; i-- {
		rest = append(rest, batch[p[i].lo:p[i].hi]...)
	}
	return rest
}

// rows counts the rows left.
func (p parts) rows() int {
	n := 0
	for _, q := range p {
		n += q.hi - q.lo
	}
	return n
}

// writeParts writes what is left of batch, part by part, until every row
// is written or refused (and sent to the fallback sink), or until the sink
// fails for another reason than the data: it then returns that error, and
// left holds what is still to write. answered reports whether the sink
// took or refused a part before that (the outage is new: the caller's
// retries start again). id numbers the batch (nil: not numbered); replay
// says it comes from the spool, and its rows count as replayed.
func (a *Async) writeParts(left *parts, batch []Record, id *BatchID, replay bool) (answered bool, err error) {
	for ; len(*left) > 0; answered = true {
		top := len(*left) - 1
		p := (*left)[top]
		rows := batch[p.lo:p.hi]
		err = a.writePart(id, p.lo, rows)
		switch {
		case err == nil:
			*left = (*left)[:top]
			a.written.Add(uint64(len(rows)))
			if replay {
				a.replayed.Add(uint64(len(rows)))
			}
		case !errors.Is(err, ErrRowRefused):
			return answered, err // an outage: retried, never split
		case len(rows) == 1:
			*left = (*left)[:top]
			a.refuse(rows[0], err)
		default:
			mid := p.lo + len(rows)/2
			(*left)[top] = part{mid, p.hi}
			*left = append(*left, part{p.lo, mid}) // the first half first: rows keep their order
		}
	}
	return answered, nil
}

// writePart makes one attempt to write rows, which start at index first
// of the batch id numbers (nil: a batch not numbered), bounded by
// WriteTimeout. The writer calls it, and the dispatcher when the spool
// fails under DurabilityDisk (storeNow): sinkMu keeps their calls apart,
// since a Sink is called from one goroutine at a time.
func (a *Async) writePart(id *BatchID, first int, rows []Record) error {
	a.sinkMu.Lock()
	defer a.sinkMu.Unlock()
	ctx, cancel := context.WithTimeout(a.runCtx, a.cfg.WriteTimeout)
	defer cancel()
	if id != nil && a.onceSink != nil {
		pid := *id
		pid.First += first
		return a.run.call(func() error { return a.onceSink.WriteBatchOnce(ctx, pid, rows) })
	}
	return a.run.call(func() error { return a.sink.WriteBatch(ctx, rows) })
}

// maxRefusalNote bounds the store's error in a refused row's note: the
// error may quote the value it refused.
const maxRefusalNote = 1024

// refuse sends a row the sink refused for its data to the fallback sink,
// with the store's error in the note [NoteRefused], and counts it.
func (a *Async) refuse(r Record, cause error) {
	a.refused.Add(1)
	r.Notes = append(slices.Clip(r.Notes), toolctx.Note{Key: NoteRefused, Value: cut(cause.Error(), maxRefusalNote)})
	batch := [1]Record{r}
	a.toFallback(context.Background(), batch[:], cause)
}

// writeDirect writes a batch handed over by the dispatcher. With a spool,
// one attempt, and the batch is spooled if it fails (a batch refused for
// the data of a row too: its replay finds the row); without, retries and
// then the fallback.
func (a *Async) writeDirect(batch []Record) {
	n := uint64(len(batch))
	if a.spool != nil {
		spooled := batch
		id, err := a.spool.nextID()
		if err == nil {
			if err = a.writePart(&id, 0, batch); err == nil {
				a.written.Add(n)
				a.recycle(batch)
				return
			}
			a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelWarn, "toolmw/audit: sink write failed; the batch goes to the spool",
				slog.Int("rows", len(batch)), slog.String("error", err.Error()))
			spooled, err = a.spoolAdd(id, batch, false)
		}
		a.spooledOrLost(spooled, err)
		a.recycle(batch) // the spool keeps a copy
		return
	}
	left := wholeBatch(len(batch))
	wait := a.cfg.Backoff
	var err error
	for attempt := 0; a.runCtx.Err() == nil; attempt++ {
		var answered bool
		if answered, err = a.writeParts(&left, batch, nil, false); err == nil {
			a.recycle(batch)
			return
		}
		if answered {
			// The sink took or refused parts before this failure: the
			// retries are counted from this one.
			attempt, wait = 0, a.cfg.Backoff
		}
		if a.cfg.MaxRetries >= 0 && attempt >= a.cfg.MaxRetries {
			break
		}
		if attempt == 0 {
			a.cfg.FallbackLogger.LogAttrs(context.Background(), slog.LevelWarn, "toolmw/audit: sink write failed; retrying",
				slog.Int("rows", left.rows()), slog.String("error", err.Error()))
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-a.runCtx.Done():
			t.Stop()
		}
		if a.runCtx.Err() != nil {
			break
		}
		a.retried.Add(uint64(left.rows()))
		wait = min(2*wait, a.cfg.MaxBackoff)
	}
	if err == nil {
		err = a.runCtx.Err()
	}
	a.toFallback(context.Background(), left.of(batch), err)
	a.recycle(batch)
}

// forget lets the sink's ledger drop the ids the spool will not send again.
func (a *Async) forget() {
	if a.onceSink == nil {
		return
	}
	a.sinkMu.Lock()
	defer a.sinkMu.Unlock()
	ctx, cancel := context.WithTimeout(a.runCtx, a.cfg.WriteTimeout)
	defer cancel()
	_ = a.run.call(func() error { return a.onceSink.ForgetBatches(ctx, a.spool.ID(), a.spool.lowWater()) })
}

// toFallback sends batch to the fallback sink, from the writer or the
// dispatcher.
func (a *Async) toFallback(ctx context.Context, batch []Record, cause error) {
	a.fallbackVia(ctx, a.run.call, batch, cause)
}

// fallbackVia sends batch to the fallback sink, calling it through call.
func (a *Async) fallbackVia(ctx context.Context, call func(func() error) error, batch []Record, cause error) {
	n := uint64(len(batch))
	attrs := []slog.Attr{slog.Int("rows", len(batch)), slog.String("error", cause.Error())}
	if len(batch) == 1 {
		attrs = append(attrs, slog.String("call_id", batch[0].CallID))
	}
	a.cfg.FallbackLogger.LogAttrs(ctx, slog.LevelError, "toolmw/audit: sending rows to the fallback sink", attrs...)
	if err := call(func() error { return a.cfg.Fallback.WriteBatch(ctx, batch) }); err != nil {
		a.dropped.Add(n)
		a.cfg.FallbackLogger.LogAttrs(ctx, slog.LevelError, "toolmw/audit: the fallback sink failed; rows dropped",
			slog.Int("rows", len(batch)), slog.String("error", err.Error()))
		return
	}
	a.fallback.Add(n)
}

// ErrRowRefused is what a [Sink]'s error wraps (errors.Is) when the store
// refused the batch for the data of a row in it (a number outside the
// store's range, text it will not take, a value over a column's limit), not
// because it is down, slow or misconfigured: the same rows would be refused
// again. [Async] then splits the batch in halves, and the halves again,
// until it has found the refused rows; it writes all the others, sends each
// refused row to the fallback sink with the store's error in the note
// [NoteRefused] (and the call id in the fallback logger's line), and
// counts it in [Stats].Refused. A spooled batch is replayed the same way,
// so a refused row never stalls the spool.
//
// A refused row reaches the fallback sink at least once, not exactly once:
// a spooled batch's frame stays on disk until its segment file is deleted,
// and a process killed after sending the row to the fallback and before
// that replays the batch at its next start, where the store's ledger
// ([OnceSink]) skips the rows it has and the refused row is refused and
// sent to the fallback again. To bound this, once a batch with a refused
// row is written the spool stops appending to its segment (see
// [DurabilityDisk], which otherwise keeps appending to one file until it
// is full), so the file is deleted as soon as the other batches in it are
// written: a row is sent again only by a crash in that window (during the
// batch's split, or while the store is behind), once per such crash. A fallback that must count each row once deduplicates
// on the call id, which the fallback logger's line names.
//
// Any other error is taken for an outage: the batch is retried or spooled
// whole, never split. The SQL store in audit/sqlstore wraps it for
// PostgreSQL's data errors and SQLite's (see that package).
var ErrRowRefused = errors.New("the store refused a row for its data")

// NoteRefused is the note key of the store's error on a row that the store
// refused ([ErrRowRefused]), as the fallback sink receives it.
const NoteRefused = "refused_by_store"

// safeCall calls f, turning a panic into an error. A Goexit goes on:
// the writer and the dispatcher call sinks through their runner, which
// contains it.
func safeCall(f func() error) (err error) {
	if fault, ok := safecall.Call(func() { err = f() }, nil); !ok {
		return errors.New("audit: sink panicked: " + errs.Describe(fault.Value))
	}
	return err
}
