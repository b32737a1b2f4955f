package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	slogmulti "github.com/samber/slog-multi"
)

// logs is where every line the operator reads goes: the diagnostics of
// failed calls, shutdown, the audit writer's own warnings and its last-resort
// fallback (a row it could not store), and the SDK's warnings.
//
// It is one github.com/samber/slog-multi composition:
//
//	RecoverHandlerError(          a failing handler is reported, never reaches a call
//	    Fanout(
//	        text lines on stderr, for a person,
//	        JSON lines in -log-file, for a machine (when given)))
//
// Fanout gives each record to every handler, so a log file that fails (a
// full disk) costs nothing on stderr; RecoverHandlerError catches the
// handler's error or panic, which slog would otherwise drop silently, and
// says so once on stderr. (slog-multi's Pool is not used: it has a data
// race at v1.7.1.)
type logs struct {
	logger    *slog.Logger // from info up
	sdkLogger *slog.Logger // the SDK's own lines, from warnings up (not its INFO chatter)
	file      *os.File     // -log-file, or nil
	failures  atomic.Int64 // records a handler failed to write
}

// newLogs builds the composition; path is -log-file ("" for none).
func newLogs(stderr io.Writer, path string) (*logs, error) {
	l := &logs{}
	handlers := []slog.Handler{slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})}
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("cannot open the log file: %v (pass -log-file with a writable path)", err)
		}
		l.file = f
		handlers = append(handlers, slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	var lastReport atomic.Int64
	recovered := slogmulti.Pipe(slogmulti.RecoverHandlerError(func(_ context.Context, r slog.Record, err error) {
		// Not through the logger (it is what failed): straight to stderr,
		// at most once every 10 s.
		l.failures.Add(1)
		now := time.Now().UnixNano()
		if last := lastReport.Load(); now-last >= int64(10*time.Second) && lastReport.CompareAndSwap(last, now) {
			fmt.Fprintf(stderr, "toolmw demo server: a log handler failed (%d records so far), e.g. on %q: %v\n",
				l.failures.Load(), r.Message, err)
		}
	})).Handler(slogmulti.Fanout(handlers...))
	l.logger = slog.New(recovered)
	l.sdkLogger = slog.New(slogmulti.Pipe(slogmulti.NewEnabledInlineMiddleware(
		func(ctx context.Context, level slog.Level, next func(context.Context, slog.Level) bool) bool {
			return level >= slog.LevelWarn && next(ctx, level)
		})).Handler(recovered))
	return l, nil
}

// Close closes the log file, if any.
func (l *logs) Close() error {
	if l.file == nil {
		return nil
	}
	return l.file.Close()
}
