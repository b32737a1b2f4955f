package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/serve"
	"github.com/toolmw/toolmw/toolctx"
)

// This file is who may call what: with -admin-token-env, the crash tool
// needs the scope admin, which only a request with the admin's bearer
// token holds; the others see no crash in tools/list (tool visibility),
// and a call to it answers as an unknown tool. With -observe, the guards
// (this scope, -rate-limit, -bulkhead) run in observe mode: they decide as
// usual, note would_reject=<guard> on the row, and refuse and hide
// nothing, which is how a guard is rolled out.

// adminScope is the scope the crash tool needs under -admin-token-env.
const adminScope = "admin"

type accessConfig struct {
	adminTokenEnv string
	observe       bool
	adminToken    string // read from $adminTokenEnv by check
}

func addAccessFlags(fs *flag.FlagSet, c *accessConfig) {
	fs.StringVar(&c.adminTokenEnv, "admin-token-env", "", "environment `variable` that holds the admin's bearer token: the crash tool then needs scope admin, which only requests with \"Authorization: Bearer <token>\" hold; others do not see crash in tools/list, and calling it answers as an unknown tool")
	fs.BoolVar(&c.observe, "observe", false, "run the guards (-admin-token-env's scope, -rate-limit, -bulkhead) in observe mode: each decides as usual and notes would_reject=<guard> on the audit row, but refuses and hides nothing")
}

func (c *accessConfig) check() error {
	if c.adminTokenEnv == "" {
		return nil
	}
	c.adminToken = os.Getenv(c.adminTokenEnv)
	if strings.TrimSpace(c.adminToken) == "" {
		return usageError{fmt.Sprintf("-admin-token-env names $%s, which is empty: export the admin's token in it", c.adminTokenEnv)}
	}
	return nil
}

// guard is the access guard for stack.ServerConfig.Access (nil without
// -admin-token-env): tools/list follows it, through middleware.Visibility.
func (c *accessConfig) guard() toolctx.Middleware {
	if c.adminToken == "" {
		return nil
	}
	g := middleware.RequireScopes(middleware.ScopePolicy{Tools: map[string][]string{"crash": {adminScope}}})
	return c.maybeObserve(g)
}

// maybeObserve is g, under middleware.Observe with -observe.
func (c *accessConfig) maybeObserve(g toolctx.Middleware) toolctx.Middleware {
	if c.observe {
		return middleware.Observe(g)
	}
	return g
}

// authenticate is the HTTP authentication (nil without -admin-token-env):
// a request with the admin's token is the admin, one without a token is
// let through anonymous (mcpsdk.ForwardIdentity forwards no identity
// without a bearer token, so its calls have none, and RequireScopes
// answers them unauthenticated), and one with another token is refused
// (401).
func (c *accessConfig) authenticate(logger *slog.Logger) func(http.Handler) http.Handler {
	if c.adminToken == "" {
		return nil
	}
	want := sha256.Sum256([]byte(c.adminToken))
	verify := func(r *http.Request) (toolctx.Identity, error) {
		h := r.Header.Get("Authorization")
		if h == "" {
			return toolctx.Identity{Subject: "anonymous"}, nil
		}
		scheme, tok, ok := strings.Cut(h, " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return toolctx.Identity{}, errs.Unauthenticated("the bearer token is not valid")
		}
		return toolctx.Identity{Subject: "admin", Scopes: []string{adminScope}}, nil
	}
	return httpmw.Authenticate(verify, httpmw.WithDiagnostics(serve.Diagnostics(logger)),
		httpmw.WithFallbackLogger(logger), httpmw.WithRealm("toolmw demo"))
}
