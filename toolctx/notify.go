package toolctx

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/toolmw/toolmw/internal/notifykey"
)

// Notifier sends notifications about one tool call to the client that made
// it, over whatever transport the call came on. The adapters
// (toolctx/mcpsdk, toolctx/mcpgo) put one in the context of every call they
// run; a handler reaches it with [Progress] and [Log], or [NotifierFrom].
// An interceptor may wrap the one it finds and pass its own to the next
// handler with [WithNotifier] (middleware.ProgressTimeout does, to see the
// handler's progress).
//
// What a handler sends this way is public by the handler's choice: it goes
// to the client as given, like a successful result's content, and toolmw
// adds nothing to it. No toolmw code sends a notification of its own, and
// none puts an error's text into one; [Log] refuses an error as its data.
// Never pass a raw error's message (err.Error() of an error that is not an
// explicit public error) as a progress message or log data.
//
// Both methods are safe for concurrent use. They return an error to the
// handler (never to the client) when the options are invalid, when the
// call's context has ended, after the call has returned ([ErrCallEnded]),
// or when the SDK could not send. Notifications are best effort: a handler
// should not fail its call because one could not be sent.
type Notifier interface {
	// Progress sends a progress notification for the call, when the
	// client asked for progress (gave a progress token); otherwise it
	// does nothing and returns nil.
	Progress(ctx context.Context, opts ProgressOptions) error
	// Log sends a log message about the call to the client, when its
	// level passes the level the client chose (see [LogOptions]);
	// otherwise it does nothing and returns nil.
	Log(ctx context.Context, opts LogOptions) error
}

// ProgressOptions is one progress report of a call (MCP's
// notifications/progress).
type ProgressOptions struct {
	// Progress is the progress so far. It must be a finite number, not
	// negative, and larger than the call's previous report (under
	// middleware.Retry, the previous attempts' reports count): the
	// protocol requires it to increase with each notification.
	Progress float64
	// Total is the total progress when known (0: unknown). It must be a
	// finite number, not negative.
	Total float64
	// Message is an optional human-readable description of the progress.
	// It is public: the client shows it.
	Message string
}

// LogLevel is the severity of a log message sent to the client: the syslog
// levels (RFC 5424) that MCP uses, by their MCP names.
type LogLevel string

// The MCP log levels, least severe first.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

// Valid reports whether l is one of the MCP log levels.
func (l LogLevel) Valid() bool {
	switch l {
	case LogDebug, LogInfo, LogNotice, LogWarning, LogError, LogCritical, LogAlert, LogEmergency:
		return true
	}
	return false
}

// LogOptions is one log message sent to the client (MCP's
// notifications/message). Whether it is sent follows the SDK: go-sdk sends
// nothing until the client chose a level (logging/setLevel, or the
// per-request level of protocol 2026-07-28), then messages at that level or
// above; mcp-go, on a session of a protocol before 2026-07-28, sends
// messages at the session's level or above ("error" until the client
// chose one), and on 2026-07-28 only what the request's level lets through. MCP deprecated logging in protocol 2026-07-28
// (SEP-2577); both SDKs still deliver it.
type LogOptions struct {
	// Level is the message's severity; empty means [LogInfo].
	Level LogLevel
	// Logger optionally names the part of the server that logs.
	Logger string
	// Data is the message: a string, or any value that encodes to JSON
	// (the protocol allows any JSON value, so no narrower type fits). It
	// is public: the client shows it. An error (at the top, or inside a
	// map[string]any or []any) is refused: its text may carry a raw
	// cause; send a message of your own, or an [errs.Error]'s Public().
	Data any
}

// ErrCallEnded is returned by a [Notifier] of an adapter when the call it
// belongs to has returned: the protocol sends nothing about a request after
// its response.
var ErrCallEnded = errors.New("toolctx: the tool call has ended; nothing more is sent about it")

// notifierKey is shared with the adapters' call context (see
// internal/notifykey).
type notifierKey = notifykey.Key

// notifierCtx carries a Notifier in one allocation.
type notifierCtx struct {
	context.Context
	n Notifier
}

func (c *notifierCtx) Value(key any) any {
	if _, ok := key.(notifierKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// WithNotifier returns a copy of ctx that carries n, for the handlers that
// run with it. An adapter carries one for each call (the kit's
// adapter.Call does, in the call's own context); an interceptor that wraps
// the Notifier it found passes its own this way. A nil n hides the one ctx
// carried: [NotifierFrom] then returns a Notifier that sends nothing.
func WithNotifier(ctx context.Context, n Notifier) context.Context {
	return &notifierCtx{Context: ctx, n: n}
}

// NotifierFrom returns the Notifier ctx carries, or, when it carries none
// (the handler runs outside an adapter, in a test say), one that sends
// nothing and returns nil. It never returns nil.
func NotifierFrom(ctx context.Context) Notifier {
	switch v := ctx.Value(notifierKey{}).(type) {
	case *notifierCtx:
		if v.n != nil {
			return v.n
		}
	case Notifier: // an adapter's call context carries its Notifier itself
		return v
	}
	return noNotifier{}
}

// Progress reports the call's progress to the client through the Notifier
// ctx carries (see [Notifier]): it checks opts, then sends a progress
// notification if the client gave a progress token, and does nothing
// otherwise. Invalid opts are an error naming the field; nothing is sent.
func Progress(ctx context.Context, opts ProgressOptions) error {
	if err := CheckProgress(opts); err != nil {
		return err
	}
	return NotifierFrom(ctx).Progress(ctx, opts)
}

// Log sends a log message about the call to the client through the
// Notifier ctx carries (see [Notifier] and [LogOptions]), when its level
// passes the client's. An empty Level is [LogInfo]; an invalid level, or
// data that is or holds an error, is an error; nothing is sent.
func Log(ctx context.Context, opts LogOptions) error {
	if opts.Level == "" {
		opts.Level = LogInfo
	}
	if err := CheckLog(opts); err != nil {
		return err
	}
	return NotifierFrom(ctx).Log(ctx, opts)
}

// CheckProgress returns an error naming what is wrong with opts, or nil:
// Progress and Total must be finite and not negative. (That Progress
// increases is checked by the adapter's Notifier, which knows the call's
// previous report.) [Progress] calls it; a Notifier of your own may.
func CheckProgress(opts ProgressOptions) error {
	if math.IsNaN(opts.Progress) || math.IsInf(opts.Progress, 0) || opts.Progress < 0 {
		return fmt.Errorf("toolctx: ProgressOptions.Progress must be a finite number, not negative; got %v", opts.Progress)
	}
	if math.IsNaN(opts.Total) || math.IsInf(opts.Total, 0) || opts.Total < 0 {
		return fmt.Errorf("toolctx: ProgressOptions.Total must be a finite number, not negative (0: unknown); got %v", opts.Total)
	}
	return nil
}

// CheckLog returns an error naming what is wrong with opts, or nil: Level
// must be one of the MCP levels (empty is not, here: [Log] fills it in),
// and Data must not be or hold an error (see [LogOptions.Data]). [Log]
// calls it; a Notifier of your own may.
func CheckLog(opts LogOptions) error {
	if !opts.Level.Valid() {
		return fmt.Errorf("toolctx: LogOptions.Level %q is not an MCP log level (debug, info, notice, warning, error, critical, alert, emergency)", string(opts.Level))
	}
	if path, ok := findError(opts.Data, 0); ok {
		return fmt.Errorf("toolctx: LogOptions.Data%s is an error, whose text may hold a raw cause: log a message of your own (or an errs.Error's Public())", path)
	}
	return nil
}

// maxDataDepth bounds findError's walk (a map may hold itself).
const maxDataDepth = 16

// findError reports whether v is an error, or a map[string]any or []any
// that holds one (within maxDataDepth levels), and where below v.
func findError(v any, depth int) (string, bool) {
	if depth > maxDataDepth {
		return "", false
	}
	switch x := v.(type) {
	case error:
		return "", true
	case map[string]any:
		for k, e := range x {
			if p, ok := findError(e, depth+1); ok {
				return fmt.Sprintf("[%q]", k) + p, true
			}
		}
	case []any:
		for i, e := range x {
			if p, ok := findError(e, depth+1); ok {
				return fmt.Sprintf("[%d]", i) + p, true
			}
		}
	}
	return "", false
}

// noNotifier is the Notifier of a context that carries none.
type noNotifier struct{}

func (noNotifier) Progress(context.Context, ProgressOptions) error { return nil }
func (noNotifier) Log(context.Context, LogOptions) error           { return nil }
