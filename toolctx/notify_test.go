package toolctx_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// recordingNotifier records what it was asked to send.
type recordingNotifier struct {
	progress []toolctx.ProgressOptions
	logs     []toolctx.LogOptions
}

func (n *recordingNotifier) Progress(_ context.Context, o toolctx.ProgressOptions) error {
	n.progress = append(n.progress, o)
	return nil
}

func (n *recordingNotifier) Log(_ context.Context, o toolctx.LogOptions) error {
	n.logs = append(n.logs, o)
	return nil
}

func TestNotifierFrom(t *testing.T) {
	ctx := context.Background()
	require.NotNil(t, toolctx.NotifierFrom(ctx), "never nil")
	assert.NoError(t, toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: 1}), "without a notifier, progress does nothing")
	assert.NoError(t, toolctx.Log(ctx, toolctx.LogOptions{Data: "x"}), "without a notifier, a log does nothing")

	n := &recordingNotifier{}
	nctx := toolctx.WithNotifier(ctx, n)
	assert.Same(t, n, toolctx.NotifierFrom(nctx), "the notifier set")
	require.NoError(t, toolctx.Progress(nctx, toolctx.ProgressOptions{Progress: 1, Total: 2, Message: "half"}), "progress")
	require.NoError(t, toolctx.Log(nctx, toolctx.LogOptions{Logger: "l", Data: "hello"}), "log")
	assert.Equal(t, []toolctx.ProgressOptions{{Progress: 1, Total: 2, Message: "half"}}, n.progress, "sent as given")
	assert.Equal(t, []toolctx.LogOptions{{Level: toolctx.LogInfo, Logger: "l", Data: "hello"}}, n.logs, "an empty level is info")

	hidden := toolctx.WithNotifier(nctx, nil)
	require.NoError(t, toolctx.Progress(hidden, toolctx.ProgressOptions{Progress: 2}), "a nil notifier hides the outer one")
	assert.Len(t, n.progress, 1, "nothing reached the outer notifier")
	assert.Equal(t, "v", toolctx.WithNotifier(context.WithValue(ctx, ctxKey{}, "v"), n).Value(ctxKey{}), "other values pass through")
}

type ctxKey struct{}

// Invalid options are errors naming the field, and nothing is sent; an
// error is never log data, however deep in a map or slice it sits.
func TestNotifyChecks(t *testing.T) {
	n := &recordingNotifier{}
	ctx := toolctx.WithNotifier(context.Background(), n)
	for _, tc := range []struct {
		opts toolctx.ProgressOptions
		want string
	}{
		{toolctx.ProgressOptions{Progress: math.NaN()}, "Progress must be a finite number"},
		{toolctx.ProgressOptions{Progress: math.Inf(1)}, "Progress must be a finite number"},
		{toolctx.ProgressOptions{Progress: -1}, "not negative; got -1"},
		{toolctx.ProgressOptions{Progress: 1, Total: math.Inf(-1)}, "Total must be a finite number"},
		{toolctx.ProgressOptions{Progress: 1, Total: -3}, "Total must be"},
	} {
		err := toolctx.Progress(ctx, tc.opts)
		require.Error(t, err, "%+v", tc.opts)
		assert.Contains(t, err.Error(), tc.want, "the error names the field")
	}
	secret := errors.New("dial postgres://u:hunter2@db/x")
	for _, tc := range []struct {
		opts toolctx.LogOptions
		want string
	}{
		{toolctx.LogOptions{Level: "verbose"}, `Level "verbose" is not an MCP log level`},
		{toolctx.LogOptions{Data: secret}, "LogOptions.Data is an error"},
		{toolctx.LogOptions{Data: errs.NotFound("gone")}, "LogOptions.Data is an error"},
		{toolctx.LogOptions{Data: map[string]any{"a": []any{1, map[string]any{"err": secret}}}}, `LogOptions.Data["a"][1]["err"] is an error`},
	} {
		err := toolctx.Log(ctx, tc.opts)
		require.Error(t, err, "%+v", tc.opts)
		assert.Contains(t, err.Error(), tc.want, "the error names what is wrong")
		assert.NotContains(t, err.Error(), "hunter2", "and not the error's text")
	}
	assert.Empty(t, n.progress, "no invalid progress was passed on")
	assert.Empty(t, n.logs, "no invalid log was passed on")

	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	assert.NoError(t, toolctx.CheckLog(toolctx.LogOptions{Level: toolctx.LogDebug, Data: cyclic}), "a cyclic map is walked to a bound")
	for _, l := range []toolctx.LogLevel{toolctx.LogDebug, toolctx.LogInfo, toolctx.LogNotice, toolctx.LogWarning, toolctx.LogError, toolctx.LogCritical, toolctx.LogAlert, toolctx.LogEmergency} {
		assert.True(t, l.Valid(), "%s is a level", l)
	}
	assert.False(t, toolctx.LogLevel("").Valid(), "empty is not a level")
}

// A tool reports its progress and logs to the client. Outside an adapter
// (here, the handler is called directly) both do nothing and return nil; an
// adapter sends them to the client that made the call, over its transport.
func ExampleProgress() {
	export := toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		const rows = 3
		for i := 1; i <= rows; i++ {
			// ... export row i ...
			// Best effort: an error (an invalid report, a call that ended)
			// is the handler's to log or ignore, and never reaches the client.
			_ = toolctx.Progress(ctx, toolctx.ProgressOptions{Progress: float64(i), Total: rows, Message: fmt.Sprintf("row %d of %d", i, rows)})
		}
		_ = toolctx.Log(ctx, toolctx.LogOptions{Level: toolctx.LogNotice, Logger: "export", Data: map[string]any{"rows": rows}})
		return toolctx.TextResult("exported")
	})
	res := export.CallTool(context.Background(), &toolctx.Request{Tool: "export"})
	fmt.Println(res.Content[0].(*toolctx.Text).Text)

	// An error is never log data: its text may hold a raw cause.
	err := toolctx.Log(context.Background(), toolctx.LogOptions{Data: errors.New("dial tcp 10.0.0.7:5432: connection refused")})
	fmt.Println(err)
	// Output:
	// exported
	// toolctx: LogOptions.Data is an error, whose text may hold a raw cause: log a message of your own (or an errs.Error's Public())
}
