package mcpsdk

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolmw/toolmw/toolctx"
)

// tokenInfoRequestIDKey is the auth.TokenInfo.Extra key under which
// [ForwardIdentity] passes the HTTP request id.
const tokenInfoRequestIDKey = "toolmw/request_id"

// ForwardIdentity carries the identity and request id that an HTTP layer put
// in the request's context ([toolctx.WithIdentity], [toolctx.WithRequestID])
// to the tool Request on every streamable HTTP transport, stateful sessions
// included. Put it right in front of the SDK's handler:
//
//	alice.New(recoverMW, requestIDMW, authMW, mcpsdk.ForwardIdentity).
//		Then(mcp.NewStreamableHTTPHandler(getServer, nil))
//
// Why: on a stateful session the SDK runs every call in the context of the
// HTTP request that created the session, so context values of later
// requests never reach a handler; the adapter therefore ignores them there.
// What the SDK does pass per request is its auth.TokenInfo, so
// ForwardIdentity hands the identity over as one (subject as UserID,
// scopes, and the request id in Extra), through the SDK's own
// auth.RequireBearerToken, which also binds a session to its user. It never
// holds a credential.
//
// A request whose context has no identity, or that carries no bearer token
// (the only requests auth.RequireBearerToken accepts), passes through
// unchanged.
func ForwardIdentity(next http.Handler) http.Handler {
	verify := func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		id := toolctx.IdentityFrom(r.Context())
		ti := &auth.TokenInfo{
			UserID:     id.Subject,
			Scopes:     append([]string(nil), id.Scopes...),
			Expiration: time.Now().Add(time.Hour),
		}
		if rid := toolctx.RequestIDFrom(r.Context()); rid != "" {
			ti.Extra = map[string]any{tokenInfoRequestIDKey: rid}
		}
		return ti, nil
	}
	withTokenInfo := auth.RequireBearerToken(verify, nil)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if toolctx.IdentityFrom(r.Context()) == nil || !hasBearer(r) {
			next.ServeHTTP(w, r)
			return
		}
		withTokenInfo.ServeHTTP(w, r)
	})
}

func hasBearer(r *http.Request) bool {
	f := strings.Fields(r.Header.Get("Authorization"))
	return len(f) == 2 && strings.EqualFold(f[0], "bearer")
}
