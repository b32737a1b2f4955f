package httpmw_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/justinas/alice"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
)

var errs0 = errs.Normalizer{}

// The HTTP constructors compose with github.com/justinas/alice in front of
// the streamable HTTP handler (here a stand-in that prints the identity).
func ExampleAuthenticate() {
	diag := func(ctx context.Context, ev middleware.DiagnosticEvent) {
		fmt.Println("diagnostics:", ev.Cause())
	}
	verify := func(r *http.Request) (toolctx.Identity, error) {
		if r.Header.Get("Authorization") != "Bearer demo" {
			return toolctx.Identity{}, httpmw.ErrNoCredentials
		}
		return toolctx.Identity{Subject: "alice", Scopes: []string{"tools:call"}}, nil
	}
	mcpHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := toolctx.IdentityFrom(r.Context())
		fmt.Fprintf(w, "subject=%s scopes=%v request=%s", id.Subject, id.Scopes, toolctx.RequestIDFrom(r.Context()))
	})
	h := alice.New(
		httpmw.Recover(httpmw.WithDiagnostics(diag)),
		httpmw.RequestID,
		httpmw.Authenticate(verify, httpmw.WithDiagnostics(diag)),
		httpmw.MaxBodyBytes(4<<20),
	).Then(mcpHandler)

	for _, auth := range []string{"Bearer demo", ""} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("X-Request-Id", "req-1")
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Result().Body)
		fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"), string(body))
	}
	// Output:
	// 200  subject=alice scopes=[tools:call] request=req-1
	// 401 Bearer realm="mcp" {"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"authentication required"}}
}
