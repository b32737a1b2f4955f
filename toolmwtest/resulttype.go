package toolmwtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// rtCanary marks every raw text the result-type check's tools carry: none
// of it may reach the client.
const rtCanary = "CANARY-rt"

// CheckResultType checks, over each of transports, that every kind of
// result toolmw's chain builds or rewrites instead of the SDK's handler (a
// rate limit's and an argument limit's rejection, a result limit's, a
// recovered panic, a scrubbed raw error, a scrubbed secret) carries
// "resultType":"complete" to a 2026-07-28 client, with no raw text. Give
// only transports whose session negotiates 2026-07-28 (go-sdk's stateful
// streamable HTTP negotiates 2025-11-25, which has no resultType). Each
// answer without it, or with raw text, is a problem of the result.
func (k Kit[S, R]) CheckResultType(ctx context.Context, transports ...Transport) (*Result, error) {
	res := new(Result)
	for _, tr := range transports {
		if err := k.checkResultType(ctx, tr, res); err != nil {
			return res, fmt.Errorf("%s %s: %w", k.Name, tr, err)
		}
	}
	return res, nil
}

func (k Kit[S, R]) checkResultType(ctx context.Context, tr Transport, res *Result) error {
	chain := middleware.New(
		middleware.Normalize(errs.Normalizer{}),
		middleware.Recover,
		middleware.When(middleware.Tools("limited"), middleware.RateLimit(middleware.RateLimitConfig{Rate: rate.Every(time.Hour)})),
		middleware.When(middleware.Tools("small"), middleware.MaxArgBytes(16)),
		middleware.When(middleware.Tools("big"), middleware.MaxResultBytes(1024, middleware.ResultReject)),
		middleware.When(middleware.Tools("leaks"), middleware.ScrubSecrets(middleware.ScrubConfig{})),
	)
	s := k.NewGuarded(chain.Middleware(), func(*toolctx.Request) bool { return true })
	ok := func() (Reply, error) { return Reply{Text: "ok"}, nil }
	k.addReply(s, "limited", ok)
	k.addReply(s, "small", ok)
	k.addReply(s, "big", func() (Reply, error) { return Reply{Text: strings.Repeat("x", 4096)}, nil })
	k.addReply(s, "panics", func() (Reply, error) { panic(rtCanary + "-panic") })
	k.addReply(s, "fails", func() (Reply, error) { return Reply{}, errors.New(rtCanary + " dial tcp 10.0.0.1:5432") })
	k.addReply(s, "leaks", func() (Reply, error) {
		return Reply{Text: "use postgres://app:" + rtCanary + "@db/prod"}, nil
	})
	conn, err := k.connect(ctx, s, nil, tr)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, c := range []struct {
		tool, why string
		args      map[string]any
	}{
		{"limited", "the SDK's own result", map[string]any{}},
		{"limited", "a rate limit's rejection", map[string]any{}},
		{"small", "an argument limit's rejection", map[string]any{"pad": strings.Repeat("a", 64)}},
		{"big", "a result limit's rejection", map[string]any{}},
		{"panics", "a recovered panic", map[string]any{}},
		{"fails", "a scrubbed raw error", map[string]any{}},
		{"leaks", "a result with a secret scrubbed", map[string]any{}},
	} {
		res.Calls++
		before := conn.Received.Len()
		_, err := conn.CallTool(ctx, c.tool, c.args)
		got := conn.Received.Since(before)
		fail := func(format string, args ...any) {
			res.problem(Problem{Transport: conn.Transport, Tool: c.tool, Issue: c.why + ": " + fmt.Sprintf(format, args...)})
		}
		switch {
		case err != nil:
			fail("the call failed: %v", err)
		case !bytes.Contains(got, []byte(`"resultType":"complete"`)):
			fail(`no "resultType":"complete" in %q`, got)
		case bytes.Contains(got, []byte(rtCanary)):
			fail("raw text reached the client: %q", got)
		}
	}
	return nil
}
