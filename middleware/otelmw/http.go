package otelmw

import (
	"context"
	"net"
	"net/http"
	"strconv"
)

type clientAddrKey struct{}

type clientAddr struct {
	host string
	port int
}

// ClientAddress puts the HTTP peer's address (http.Request.RemoteAddr) in
// the request's context, for the span's client.address and client.port.
// Put it in front of the MCP SDK's HTTP handler:
//
//	alice.New(httpmw.Recover(httpmw.WithDiagnostics(diag)), otelmw.ClientAddress).Then(mcpHandler)
//
// It reads the TCP peer only, not X-Forwarded-For or Forwarded: behind a
// proxy that is the proxy's address, because the client controls those
// headers. On a stateful go-sdk session the tool call runs in the context
// of the HTTP request that opened the session (see toolctx/mcpsdk), so the
// address is that request's peer.
func ClientAddress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil || host == "" {
			next.ServeHTTP(w, r)
			return
		}
		p, _ := strconv.Atoi(port)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientAddrKey{}, &clientAddr{host: host, port: p})))
	})
}

func clientAddressFrom(ctx context.Context) *clientAddr {
	a, _ := ctx.Value(clientAddrKey{}).(*clientAddr)
	return a
}
