package middleware_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/mcpsdk"
)

// TestProgressTimeoutThroughTheSDK: ProgressTimeout behind the go-sdk
// adapter, with a real client over a pipe: each progress report the
// adapter sends to the client moves the idle deadline, a call that goes
// Idle without one times out, and a client's cancellation is recorded as
// canceled, not as a timeout, even when the idle deadline passes after it.
//
// The deadline's clock is a fake one the handlers advance, step by step,
// after each report went through: what the test checks does not depend on
// how fast the machine is (the real clock's version of this test had to
// run itself again when a busy machine starved it). Waits on the client's
// side are for events, each bounded by a minute that fails loudly.
func TestProgressTimeoutThroughTheSDK(t *testing.T) {
	const idle, rounds = 500 * time.Millisecond, 5
	clk := middleware.NewFakeClock()
	rows := make(chan middleware.CallInfo, 4)
	chain := middleware.New(
		middleware.After(func(_ context.Context, info middleware.CallInfo) { rows <- info }),
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.ProgressTimeoutWithClock(middleware.ProgressTimeoutConfig{Idle: idle, Max: time.Minute}, clk),
	)
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	// long reports, then lets Idle less a millisecond pass, rounds times:
	// 2.5 Idle in all, alive only if every report moved the deadline.
	require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "long", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		for i := 1; i <= rounds; i++ {
			if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i)}); err != nil {
				return toolctx.ErrorResult(err)
			}
			clk.Advance(idle - time.Millisecond)
			if ctx.Err() != nil {
				return toolctx.ErrorResult(ctx.Err())
			}
		}
		return toolctx.TextResult("done")
	})))
	// stalled reports once, then lets Idle pass without a report.
	require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "stalled", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}); err != nil {
			return toolctx.ErrorResult(err)
		}
		clk.Advance(idle)
		<-ctx.Done() // ended by the idle deadline, synchronously in Advance
		return toolctx.ErrorResult(ctx.Err())
	})))
	// forever reports once and runs until its context ends; once the
	// client's cancellation has ended it, the idle deadline passes too.
	reported := make(chan struct{})
	require.NoError(t, mcpsdk.AddTool(s, &mcp.Tool{Name: "forever", InputSchema: obj}, toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
		if err := toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}); err != nil {
			return toolctx.ErrorResult(err)
		}
		close(reported)
		<-ctx.Done()
		clk.Advance(2 * idle)
		return toolctx.ErrorResult(ctx.Err())
	})))
	mcpsdk.Install(s, chain.Middleware(), mcpsdk.WithTransport(toolctx.TransportInMemory))

	heard := make(chan mcp.ProgressNotificationParams, 2*rounds)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { heard <- *r.Params },
	})
	c1, c2 := net.Pipe()
	ss, err := s.Connect(context.Background(), &mcp.IOTransport{Reader: c1, Writer: c1}, nil)
	require.NoError(t, err, "server connect")
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: c2, Writer: c2}, nil)
	require.NoError(t, err, "client connect")
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })

	row := func(what string) middleware.CallInfo {
		t.Helper()
		select {
		case info := <-rows:
			return info
		case <-time.After(time.Minute):
			t.Fatalf("no row for %s", what)
			return middleware.CallInfo{}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "long", Meta: mcp.Meta{"progressToken": "long"}})
	require.NoError(t, err, "long call")
	require.False(t, res.IsError, "%v with a report every %v under a %v idle deadline: %+v", rounds*(idle-time.Millisecond), idle-time.Millisecond, idle, res.Content)
	assert.False(t, row("long").Outcome.Failed, "the long call's row: ok")
	for i := 1; i <= rounds; i++ { // the reports that moved the deadline reached the client
		select {
		case p := <-heard:
			assert.Equal(t, float64(i), p.Progress, "report %d", i)
			assert.Equal(t, "long", p.ProgressToken, "report %d", i)
		case <-time.After(time.Minute):
			t.Fatalf("report %d never reached the client", i)
		}
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "stalled", Meta: mcp.Meta{"progressToken": "stalled"}})
	require.NoError(t, err, "stalled call")
	require.True(t, res.IsError, "Idle without a report times out")
	require.Len(t, res.Content, 1)
	assert.Equal(t, "the tool call timed out: no progress for 500ms", res.Content[0].(*mcp.TextContent).Text)
	r := row("stalled")
	assert.Equal(t, errs.CodeTimeout, r.Outcome.Public.Code, "the stalled call's row: timeout")

	cctx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	go func() { // cancel once the call has reported progress
		defer cancelCall()
		select {
		case <-reported:
		case <-cctx.Done():
		}
	}()
	_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "forever", Meta: mcp.Meta{"progressToken": "forever"}})
	require.ErrorIs(t, err, context.Canceled, "the client cancelled")
	assert.Equal(t, errs.CodeCanceled, row("forever").Outcome.Public.Code, "the cancelled call's row: canceled, not timeout")
}
