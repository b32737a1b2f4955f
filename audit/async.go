package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// FullPolicy says what [Async.Emit] does when the queue is full.
type FullPolicy int

const (
	// Block waits for room in the queue: no row is lost, and a call waits
	// while the sink is slower than the calls.
	Block FullPolicy = iota
	// Drop counts the row as dropped and returns at once: a call never
	// waits on the sink's I/O.
	Drop
)

// String returns "block" or "drop".
func (p FullPolicy) String() string {
	if p == Drop {
		return "drop"
	}
	return "block"
}

// AsyncConfig configures [NewAsync]. The zero value gives the defaults.
type AsyncConfig struct {
	// QueueSize is how many rows wait in memory at most, rounded up to a
	// power of two. The queue's slots are allocated up front (a few hundred
	// bytes each, plus what the rows reference). Default 8192.
	QueueSize int
	// BatchSize is how many rows go to the sink in one write at most, and
	// how many wait before the writer wakes up early. Default 2048, at most
	// QueueSize.
	BatchSize int
	// FlushInterval is how often the writer writes what is queued, full
	// batch or not: how long a row waits at most when calls are few.
	// Default 200ms.
	FlushInterval time.Duration
	// Policy is what Emit does when the queue is full. Default Block.
	Policy FullPolicy
	// MaxRetries is how many times a failed write is retried before the
	// batch goes to Fallback. Default 5; a negative value retries until
	// Close's context ends.
	MaxRetries int
	// Backoff is the wait before the first retry; it doubles with each
	// retry up to MaxBackoff. Defaults 50ms and 5s.
	Backoff, MaxBackoff time.Duration
	// WriteTimeout bounds one write to the sink. Default 30s.
	WriteTimeout time.Duration
	// Fallback receives the batches the sink could not take, and rows
	// emitted after Close. It must be safe for concurrent use and fast.
	// Default: a [SlogSink] on Logger's handler.
	Fallback Sink
	// Logger reports failures and the counters on Close. Default
	// slog.Default().
	Logger *slog.Logger
}

// Stats are an [Async]'s counters, in rows.
type Stats struct {
	// Written is how many rows the sink took.
	Written uint64
	// Retried is how many rows were sent to the sink again after a failed
	// write (a batch of n rows retried twice counts 2n).
	Retried uint64
	// Fallback is how many rows went to the fallback sink.
	Fallback uint64
	// Dropped is how many rows were lost: queue full under [Drop], or the
	// fallback failed too (each such loss is logged).
	Dropped uint64
	// Queued is how many rows wait in the queue now.
	Queued int
}

// LogValue renders the counters for slog.
func (s Stats) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Uint64("written", s.Written), slog.Uint64("retried", s.Retried),
		slog.Uint64("fallback", s.Fallback), slog.Uint64("dropped", s.Dropped),
		slog.Int("queued", s.Queued))
}

// Async is an [Emitter] that puts rows in a bounded queue and writes them to
// a [Sink] from one goroutine, in batches by size and interval. A failed
// write is retried with exponential backoff, then the batch goes to the
// fallback sink; a tool call never fails because of the sink. Counters can
// be read at any time with [Async.Stats].
//
// Emit copies the row into a preallocated queue slot: it does not allocate.
// Close flushes everything and stops the goroutine. Create one with
// [NewAsync].
type Async struct {
	sink     Sink
	cfg      AsyncConfig
	q        *ring
	batch    uint64
	wake     chan struct{}
	closing  chan struct{}
	done     chan struct{}
	runCtx   context.Context
	abort    context.CancelFunc
	closed   atomic.Bool
	inflight atomic.Int64
	once     sync.Once
	closeErr error

	written, retried, fallback, dropped atomic.Uint64
}

// NewAsync starts a writer to sink. Call [Async.Close] to flush and stop
// it. A nil sink panics.
func NewAsync(sink Sink, cfg AsyncConfig) *Async {
	if sink == nil {
		panic("audit.NewAsync: nil sink")
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 8192
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 2048
	}
	if cfg.BatchSize > cfg.QueueSize {
		cfg.BatchSize = cfg.QueueSize
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 200 * time.Millisecond
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 5
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 50 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Second
	}
	if cfg.MaxBackoff < cfg.Backoff {
		cfg.MaxBackoff = cfg.Backoff
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Fallback == nil {
		cfg.Fallback = NewSlogSink(cfg.Logger.Handler())
	}
	a := &Async{
		sink:    sink,
		cfg:     cfg,
		q:       newRing(cfg.QueueSize),
		batch:   uint64(cfg.BatchSize),
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	a.runCtx, a.abort = context.WithCancel(context.Background())
	go a.run()
	return a
}

// Emit enqueues r. Under [Block] it waits for room; under [Drop] it never
// waits, and counts r as dropped when the queue is full. After Close, r goes
// straight to the fallback sink under Block and is counted as dropped under
// Drop.
func (a *Async) Emit(ctx context.Context, r Record) { a.emit(ctx, &r) }

// emit is Emit without copying the row first: [Interceptor] calls it
// directly. r does not escape: push copies it into a slot.
func (a *Async) emit(ctx context.Context, r *Record) {
	a.inflight.Add(1)
	if a.closed.Load() {
		a.inflight.Add(-1)
		a.lateRow(ctx, *r)
		return
	}
	if pos := a.q.push(r); pos != 0 {
		if pos%a.batch == 0 {
			a.signal() // a batch's worth arrived since the last signal
		}
		a.inflight.Add(-1)
		return
	}
	a.signal()
	if a.cfg.Policy == Drop {
		a.dropped.Add(1)
		a.inflight.Add(-1)
		return
	}
	// Block: wait for the writer to make room, yielding first, then
	// sleeping longer and longer (up to 2ms) so that many blocked calls do
	// not burn the CPU while the sink is down.
	nap := 50 * time.Microsecond
	for spin := 0; a.q.push(r) == 0; spin++ {
		if a.runCtx.Err() != nil { // Close gave up: nobody will read the queue
			a.inflight.Add(-1)
			a.lateRow(ctx, *r)
			return
		}
		a.signal()
		if spin < 16 {
			runtime.Gosched()
			continue
		}
		time.Sleep(nap)
		nap = min(2*nap, 2*time.Millisecond)
	}
	a.inflight.Add(-1)
}

// signal wakes the writer goroutine, without waiting: a full batch is
// ready. (The writer does not wait on the queue itself, so that an Emit
// never pays for waking it up row by row.)
func (a *Async) signal() {
	select {
	case a.wake <- struct{}{}:
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
	r.finish()
	batch := [1]Record{r}
	a.toFallback(context.WithoutCancel(ctx), batch[:], errors.New("the writer is closed"))
}

// Stats returns the counters now.
func (a *Async) Stats() Stats {
	return Stats{
		Written: a.written.Load(), Retried: a.retried.Load(),
		Fallback: a.fallback.Load(), Dropped: a.dropped.Load(),
		Queued: a.q.len(),
	}
}

// Close stops accepting rows into the queue, writes every queued row (with
// the usual retries and fallback), logs the counters and returns. When ctx
// ends first, the writes in progress are cancelled, the rows left go to the
// fallback sink, and Close returns ctx's error once that is done. Close is
// idempotent; later calls return the first call's result.
func (a *Async) Close(ctx context.Context) error {
	a.once.Do(func() {
		a.closed.Store(true)
		close(a.closing)
		select {
		case <-a.done:
		case <-ctx.Done():
			a.closeErr = fmt.Errorf("audit: close: %w; the rows left went to the fallback sink", ctx.Err())
			a.abort()
			<-a.done
		}
		a.abort()
		a.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "toolmw/audit: writer closed",
			slog.Any("stats", a.Stats()))
	})
	return a.closeErr
}

func (a *Async) run() {
	defer close(a.done)
	batch := make([]Record, 0, a.cfg.BatchSize)
	flush := func() {
		if len(batch) > 0 {
			a.deliver(batch)
			clear(batch) // drop references to the rows' strings and maps
			batch = batch[:0]
		}
	}
	// drain writes what is queued now, in full batches, and the last
	// partial batch when all is true.
	drain := func(all bool) {
		for {
			n := len(batch)
			batch = batch[:n+1]
			if a.q.pop(&batch[n]) {
				if len(batch) == cap(batch) {
					flush()
				}
				continue
			}
			batch = batch[:n]
			if all {
				flush()
			}
			return
		}
	}
	tick := time.NewTicker(a.cfg.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-a.wake:
			drain(false)
		case <-tick.C:
			drain(true)
		case <-a.closing:
			for {
				drain(true)
				if a.inflight.Load() == 0 && a.q.len() == 0 {
					return
				}
				time.Sleep(50 * time.Microsecond) // an Emit is between its check and its send
			}
		}
	}
}

// deliver writes batch to the sink with retries, then to the fallback.
func (a *Async) deliver(batch []Record) {
	for i := range batch {
		batch[i].finish()
	}
	n := uint64(len(batch))
	wait := a.cfg.Backoff
	var err error
	for attempt := 0; a.runCtx.Err() == nil; attempt++ {
		ctx, cancel := context.WithTimeout(a.runCtx, a.cfg.WriteTimeout)
		err = safeWrite(ctx, a.sink, batch)
		cancel()
		if err == nil {
			a.written.Add(n)
			return
		}
		if a.cfg.MaxRetries >= 0 && attempt >= a.cfg.MaxRetries {
			break
		}
		if attempt == 0 {
			a.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "toolmw/audit: sink write failed; retrying",
				slog.Int("rows", len(batch)), slog.String("error", err.Error()))
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
		a.retried.Add(n)
		wait = min(2*wait, a.cfg.MaxBackoff)
	}
	if err == nil {
		err = a.runCtx.Err()
	}
	a.toFallback(context.Background(), batch, err)
}

func (a *Async) toFallback(ctx context.Context, batch []Record, cause error) {
	n := uint64(len(batch))
	a.cfg.Logger.LogAttrs(ctx, slog.LevelError, "toolmw/audit: sending rows to the fallback sink",
		slog.Int("rows", len(batch)), slog.String("error", cause.Error()))
	if err := safeWrite(ctx, a.cfg.Fallback, batch); err != nil {
		a.dropped.Add(n)
		a.cfg.Logger.LogAttrs(ctx, slog.LevelError, "toolmw/audit: the fallback sink failed; rows dropped",
			slog.Int("rows", len(batch)), slog.String("error", err.Error()))
		return
	}
	a.fallback.Add(n)
}

// safeWrite calls s.WriteBatch, turning a panic into an error.
func safeWrite(ctx context.Context, s Sink, batch []Record) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("audit: sink panicked: %v", v)
		}
	}()
	return s.WriteBatch(ctx, batch)
}
