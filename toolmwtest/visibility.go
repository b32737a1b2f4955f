package toolmwtest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// visPolicy: "public" needs nothing, "read" needs "read", "deploy" needs
// "deploy:prod"; the caller, alice, may only read.
var (
	visPolicy = middleware.ScopePolicy{Tools: map[string][]string{"read": {"read"}, "deploy": {"deploy:prod"}}}
	visCaller = toolctx.Identity{Subject: "alice", Scopes: []string{"read"}}
)

// CheckVisibilityObserve checks, over each of transports, that the
// adapter's visibility follows a guard's observe mode when it is asked of
// the guard (middleware.Visibility): with RequireScopes observed, a caller
// lists and calls every tool, as before the guard was rolled out, and the
// call the guard would have refused is noted would_reject=require_scopes;
// enforced, the same wiring leaves the tool out of the caller's list and
// answers its call as an unknown tool's, without running it. Each broken
// expectation is a problem of the result.
func (k Kit[S, R]) CheckVisibilityObserve(ctx context.Context, transports ...Transport) (*Result, error) {
	res := new(Result)
	for _, tr := range transports {
		for _, observed := range []bool{true, false} {
			if err := k.checkVisibility(ctx, tr, observed, res); err != nil {
				return res, fmt.Errorf("%s %s: %w", k.Name, tr, err)
			}
		}
	}
	return res, nil
}

func (k Kit[S, R]) checkVisibility(ctx context.Context, tr Transport, observed bool, res *Result) error {
	var (
		ran   atomic.Int64
		mu    sync.Mutex
		notes []toolctx.Note
	)
	scopes := middleware.RequireScopes(visPolicy)
	if observed {
		scopes = middleware.Observe(scopes)
	}
	after := middleware.After(func(_ context.Context, info middleware.CallInfo) {
		mu.Lock()
		defer mu.Unlock()
		notes = info.Result.Notes()
	})
	s := k.NewGuarded(middleware.New(after, scopes).Middleware(), middleware.Visibility(scopes))
	for _, name := range []string{"public", "read", "deploy"} {
		k.addReply(s, name, func() (Reply, error) {
			ran.Add(1)
			return Reply{Text: "ran " + name}, nil
		})
	}
	// The caller's identity: in the context of every in-process request,
	// and put there by an HTTP layer in front of the SDK's handler.
	ctx = toolctx.WithIdentity(ctx, visCaller)
	wrap := func(h http.Handler) http.Handler {
		if k.Identify != nil {
			h = k.Identify(h)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(toolctx.WithIdentity(r.Context(), visCaller)))
		})
	}
	conn, err := k.connect(ctx, s, wrap, tr)
	if err != nil {
		return err
	}
	defer conn.Close()
	mode, want := "observed", []string{"deploy", "public", "read"}
	if !observed {
		mode, want = "enforced", []string{"public", "read"}
	}
	fail := func(format string, args ...any) {
		res.problem(Problem{Transport: conn.Transport, Tool: "deploy", Issue: mode + ": " + fmt.Sprintf(format, args...)})
	}
	tools, err := conn.ListTools(ctx)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		fail("the caller's tools/list is %v, want %v", names, want)
	}
	res.Calls++
	answer, err := conn.CallTool(ctx, "deploy", map[string]any{})
	mu.Lock()
	last := notes
	mu.Unlock()
	switch {
	case observed && (err != nil || answer.IsError):
		fail("the call must run as if the guard were absent, got error %v, isError=%v %q", err, answer.IsError, answer.Text)
	case observed && ran.Load() != 1:
		fail("the tool ran %d times, want once", ran.Load())
	case observed && !slices.Contains(last, toolctx.Note{Key: middleware.NoteWouldReject, Value: "require_scopes"}):
		fail("the row's notes %v lack %s=require_scopes", last, middleware.NoteWouldReject)
	case !observed && err == nil:
		fail("a hidden tool's call must be answered as an unknown tool's (a protocol error), got isError=%v %q", answer.IsError, answer.Text)
	case !observed && ran.Load() != 0:
		fail("a hidden tool ran")
	}
	return nil
}
