package middleware

import (
	"context"
	"log/slog"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/internal/safecall"
	"github.com/toolmw/toolmw/toolctx"
)

// callKey is key(req) for the guard named guard, with a panic in key
// stopped as every user hook's is: it is reported to slog.Default() at
// error level (with the tool and the call id) and the call counts under the
// key "", shared by every call whose key could not be made, so that it is
// still limited, never let through unlimited. A runtime.Goexit in key is
// reported and goes on.
func callKey(ctx context.Context, guard string, key KeyFunc, req *toolctx.Request) (k string) {
	var s safecall.Scope // the deferred form: no closure on the admitted path
	defer s.Stop(func(f safecall.Fault) {
		k = ""
		safecall.Reporter{Describe: errs.Describe}.Report(ctx,
			"toolmw: the "+guard+" key function panicked; the call counts under the key \"\"", f,
			slog.String("tool", req.Tool), slog.String("call_id", req.CallID))
	})
	k = key(req)
	s.Returned()
	return k
}
