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

// ForwardIdentity carries the identity and request id an HTTP layer put in
// the request's context ([toolctx.WithIdentity], [toolctx.WithRequestID])
// to the tool Request on every streamable HTTP session, stateful ones
// included, as the SDK's auth.TokenInfo (never a credential). Put it right
// in front of the SDK's handler:
//
//	alice.New(recoverMW, requestIDMW, authMW, mcpsdk.ForwardIdentity).
//		Then(mcp.NewStreamableHTTPHandler(getServer, nil))
//
// A request without an identity or a bearer token passes unchanged. Why it
// is needed: docs/adapters/mcpsdk.md, "The request".
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
