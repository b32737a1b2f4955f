package audit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	slogmulti "github.com/samber/slog-multi"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// downHandler is a log collector that is unreachable.
type downHandler struct{ slog.Handler }

func (downHandler) Enabled(context.Context, slog.Level) bool { return true }
func (downHandler) Handle(context.Context, slog.Record) error {
	return errors.New("collector: connection refused")
}

// Audit rows as slog records, fanned out with slog-multi: a JSON log, and a
// remote collector with a local text log as its failover. RecoverHandlerError
// reports a failing handler without letting it reach the tool call. (Do not
// use slog-multi's Pool: it races at v1.7.1.)
func Example_slogMulti() {
	// Fixed output for the example: no times or durations.
	stable := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "duration" {
			return slog.Attr{}
		}
		return a
	}
	jsonLog := slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: stable})
	backup := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: stable})
	report := slogmulti.RecoverHandlerError(func(_ context.Context, _ slog.Record, err error) {
		fmt.Println("audit handler failed:", err)
	})
	h := report(slogmulti.Fanout(
		jsonLog,
		slogmulti.Failover()(downHandler{}, backup),
		downHandler{}, // a second collector with no failover: reported, never fatal
	))

	sink := audit.NewSlogSink(h)
	chain := middleware.New(audit.Interceptor(audit.Direct(sink, audit.DirectConfig{})), middleware.Normalize(errs.Normalizer{}), middleware.Recover)
	tool, _ := chain.ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.ErrorResult(errors.New("dial tcp 10.0.0.7:5432: connection refused"))
	})
	res := tool.CallTool(context.Background(), &toolctx.Request{Tool: "invoices", CallID: "call-1", Transport: toolctx.TransportStdio})
	fmt.Println("the client was told:", res.Error.Message)
	// Output:
	// {"level":"ERROR","msg":"toolmw audit","kind":"tool","call_id":"call-1","transport":"stdio","tool":"invoices","outcome":"error","code":"internal","message":"dial tcp 10.0.0.7:5432: connection refused","response_bytes":69,"content_blocks":1}
	// level=ERROR msg="toolmw audit" kind=tool call_id=call-1 transport=stdio tool=invoices outcome=error code=internal message="dial tcp 10.0.0.7:5432: connection refused" response_bytes=69 content_blocks=1
	// audit handler failed: collector: connection refused
	// the client was told: internal error: the tool failed; the cause was recorded on the server
}

// A Record renders itself for slog with typed attributes.
func ExampleRecord_LogValue() {
	stable := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "time" || a.Key == "duration" {
			return slog.Attr{}
		}
		return a
	}
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: stable}))
	log.Info("row", "audit", audit.Record{Kind: audit.KindTool, Tool: "search", CallID: "c-7", Outcome: audit.OutcomeRejected,
		Code: errs.CodeRateLimited, Message: "slow down"})
	// Output:
	// level=INFO msg=row audit.kind=tool audit.call_id=c-7 audit.tool=search audit.outcome=rejected audit.code=rate_limited audit.message="slow down"
}
