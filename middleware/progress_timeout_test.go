package middleware_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// The tests advance a fake clock from inside the handler: each step is
// synchronous, so nothing here depends on how fast the machine is.

var ptCfg = middleware.ProgressTimeoutConfig{Idle: 10 * time.Second, Max: time.Minute}

func progress(t *testing.T, ctx context.Context, p float64) {
	t.Helper()
	require.NoError(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: p}), "progress %v", p)
}

// Progress keeps a call alive past Idle, up to Max.
func TestProgressTimeoutResetsOnProgress(t *testing.T) {
	clk := middleware.NewFakeClock()
	start := clk.Now()
	var deadline time.Time
	r := runRow(t, context.Background(), newReq("export"), middleware.ProgressTimeoutWithClock(ptCfg, clk),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			deadline, _ = ctx.Deadline()
			for i := 1; i <= 5; i++ {
				progress(t, ctx, float64(i))
				clk.Advance(9 * time.Second) // under Idle since the last report
				require.NoError(t, ctx.Err(), "alive after %v, past Idle, with progress", clk.Now().Sub(start))
			}
			return toolctx.TextResult("exported")
		}))
	assert.Equal(t, start.Add(time.Minute), deadline, "the context's deadline is the maximum")
	require.False(t, r.res.IsError, "45s of a 10s idle deadline, reporting progress: success")
	assert.False(t, r.after[0].Outcome.Failed, "the row says ok")
	_, noted := r.after[0].Result.Note(middleware.NoteTimeout)
	assert.False(t, noted, "no timeout note")
}

// Without progress for Idle, the call times out, with the idle message and
// note; the handler sees context.DeadlineExceeded.
func TestProgressTimeoutIdle(t *testing.T) {
	clk := middleware.NewFakeClock()
	var sawErr, sawCause error
	r := runRow(t, context.Background(), newReq("export"), middleware.ProgressTimeoutWithClock(ptCfg, clk),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			progress(t, ctx, 1)
			clk.Advance(9 * time.Second)
			progress(t, ctx, 2)
			clk.Advance(9 * time.Second) // 18s in: alive, 9s since the last report
			require.NoError(t, ctx.Err(), "alive: the deadline moved with the report")
			clk.Advance(time.Second) // 10s since the last report
			<-ctx.Done()
			sawErr, sawCause = ctx.Err(), context.Cause(ctx)
			return toolctx.ErrorResult(ctx.Err())
		}))
	assert.Equal(t, context.DeadlineExceeded, sawErr, "the handler's context ends with DeadlineExceeded")
	assert.ErrorIs(t, sawCause, context.DeadlineExceeded, "its cause is a deadline")
	assert.Equal(t, errs.Public{Code: errs.CodeTimeout, Message: "the tool call timed out: no progress for 10s"}, *r.res.Error, "the idle timeout")
	assert.Equal(t, errs.CodeTimeout, r.after[0].Outcome.Public.Code, "the row says timeout")
	v, _ := r.after[0].Result.Note(middleware.NoteTimeout)
	assert.Equal(t, "idle", v, "noted as idle")
	assert.Empty(t, r.diag, "not a diagnostic")
}

// However much progress the handler reports, Max holds.
func TestProgressTimeoutMax(t *testing.T) {
	clk := middleware.NewFakeClock()
	start := clk.Now()
	reports := 0
	var ended time.Duration
	r := runRow(t, context.Background(), newReq("export"), middleware.ProgressTimeoutWithClock(ptCfg, clk),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			for ctx.Err() == nil && reports < 100 {
				reports++
				if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(reports)}); err != nil {
					break
				}
				clk.Advance(5 * time.Second)
			}
			ended = clk.Now().Sub(start)
			return toolctx.TextResult("too late")
		}))
	assert.Equal(t, time.Minute, ended, "the context ended at the maximum, progress or not")
	assert.Equal(t, 12, reports, "a report every 5s until then")
	assert.Equal(t, errs.Public{Code: errs.CodeTimeout, Message: "the tool call timed out after 1m0s"}, *r.res.Error, "the maximum's timeout, for a late success")
	v, _ := r.after[0].Result.Note(middleware.NoteTimeout)
	assert.Equal(t, "max", v, "noted as max")
}

// A client's cancellation is the caller's: the row says canceled, never
// timeout, even when the deadline passes after it.
func TestProgressTimeoutClientCancellation(t *testing.T) {
	clk := middleware.NewFakeClock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sawErr error
	r := runRow(t, ctx, newReq("export"), middleware.ProgressTimeoutWithClock(ptCfg, clk),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			progress(t, ctx, 1)
			cancel() // the client gives up
			<-ctx.Done()
			clk.Advance(time.Hour) // and the deadlines pass after that
			sawErr = ctx.Err()
			return toolctx.ErrorResult(ctx.Err())
		}))
	assert.Equal(t, context.Canceled, sawErr, "the handler sees the cancellation, not a deadline")
	assert.Equal(t, errs.CodeCanceled, r.after[0].Outcome.Public.Code, "the row says canceled")
	_, noted := r.after[0].Result.Note(middleware.NoteTimeout)
	assert.False(t, noted, "no timeout note")
}

// A raw error returned after the deadline is scrubbed for the caller and
// kept in the row, with the notes of the guards inside.
func TestProgressTimeoutLateRawError(t *testing.T) {
	clk := middleware.NewFakeClock()
	raw := errors.New("read tcp 10.0.0.7:5432: connection reset by peer")
	noting := func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			return next.CallTool(ctx, req).WithNote("attempts", "2")
		})
	}
	r := runRow(t, context.Background(), newReq("export"), middleware.New(middleware.ProgressTimeoutWithClock(ptCfg, clk), noting).Middleware(),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			clk.Advance(10 * time.Second)
			<-ctx.Done()
			return toolctx.ErrorResult(raw)
		}))
	assert.Equal(t, "the tool call timed out: no progress for 10s", r.res.Error.Message, "the caller gets the timeout")
	assert.True(t, r.after[0].Outcome.Scrubbed, "the raw message was scrubbed from the caller's view")
	assert.Same(t, raw, r.after[0].Cause(), "the row keeps the raw cause")
	assert.Equal(t, []toolctx.Note{{Key: "attempts", Value: "2"}, {Key: middleware.NoteTimeout, Value: "idle"}}, r.after[0].Result.Notes(), "the guard's note and the timeout's")
}

// refusing is a Notifier that refuses every report.
type refusing struct{}

func (refusing) Progress(context.Context, toolctx.ProgressOptions) error {
	return errors.New("refused")
}
func (refusing) Log(context.Context, toolctx.LogOptions) error { return nil }

// A report the notifier refused moves nothing; the timer firing late (the
// clock past the deadline before the timer ran) still times the call out.
func TestProgressTimeoutRefusedProgress(t *testing.T) {
	clk := middleware.NewFakeClock()
	ctx := toolctx.WithNotifier(context.Background(), refusing{})
	var stillLive bool
	r := runRow(t, ctx, newReq("export"), middleware.ProgressTimeoutWithClock(ptCfg, clk),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			clk.Advance(9 * time.Second)
			assert.Error(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}), "the notifier's refusal reaches the handler")
			clk.Advance(time.Second)
			stillLive = ctx.Err() == nil
			return toolctx.TextResult("done")
		}))
	assert.False(t, stillLive, "the refused report did not move the deadline")
	assert.Equal(t, errs.CodeTimeout, r.res.Error.Code, "a timeout")
}

func TestProgressTimeoutConstruction(t *testing.T) {
	assert.PanicsWithValue(t, "middleware.ProgressTimeout: Idle must be positive, got 0s", func() {
		middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{Max: time.Second})
	}, "no Idle")
	assert.PanicsWithValue(t, "middleware.ProgressTimeout: Max (1s) must be at least Idle (2s)", func() {
		middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{Idle: 2 * time.Second, Max: time.Second})
	}, "Max below Idle")
	assert.NotPanics(t, func() {
		middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{Idle: time.Second, Max: time.Second})
	}, "Max equal to Idle is Timeout")
}

// On the real clock: a handler that reports progress every 10ms runs 2.5s
// under a 1s idle deadline, and one that keeps reporting is stopped at a
// 1.5s maximum. (Bounds generous for a loaded machine: a report is late
// only if the goroutine waits 990ms to run.)
func TestProgressTimeoutRealClock(t *testing.T) {
	busy := func(ctx context.Context, until time.Duration) *toolctx.CallResult {
		start := time.Now()
		for i := 1; time.Since(start) < until; i++ {
			if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i)}); err != nil {
				return toolctx.ErrorResult(err)
			}
			select {
			case <-ctx.Done():
				return toolctx.ErrorResult(ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
		return toolctx.TextResult("done")
	}
	// Progress every 10ms under a 1s idle deadline: only a stall of the
	// whole process for 990ms would time it out (CI runs on 2 busy cores).
	r := runRow(t, context.Background(), newReq("export"), middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{Idle: time.Second, Max: time.Minute}),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
			return busy(ctx, 2500*time.Millisecond)
		}))
	assert.False(t, r.res.IsError, "2.5s with progress under a 1s idle deadline: %+v", r.res.Error)

	start := time.Now()
	r = runRow(t, context.Background(), newReq("export"), middleware.ProgressTimeout(middleware.ProgressTimeoutConfig{Idle: time.Second, Max: 1500 * time.Millisecond}),
		toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult { return busy(ctx, time.Hour) }))
	require.True(t, r.res.IsError, "stopped")
	assert.Equal(t, "the tool call timed out after 1.5s", r.res.Error.Message, "by the maximum")
	assert.GreaterOrEqual(t, time.Since(start), 1500*time.Millisecond, "not before it")
}
