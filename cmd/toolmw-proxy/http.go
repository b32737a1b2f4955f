package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware/httpmw"
	"github.com/toolmw/toolmw/toolctx"
)

// originCheck is the DNS-rebinding protection the MCP specification asks of
// HTTP servers: a request whose Host is not the proxy's (a loopback name
// or address, the listen address, or one of allowedHosts) is refused, and
// so is one whose Origin, when it has one, is not a loopback origin or one
// of allowedOrigins. A page on another site that a browser's DNS now
// resolves to 127.0.0.1 carries its own Host and Origin, and is refused
// with 403 before anything reads its body.
func originCheck(listen string, allowedHosts, allowedOrigins []string) func(http.Handler) http.Handler {
	hosts := map[string]bool{}
	for _, h := range append([]string{listen}, allowedHosts...) {
		hosts[strings.ToLower(h)] = true
		if name, _, err := net.SplitHostPort(h); err == nil {
			hosts[strings.ToLower(name)] = true
		}
	}
	origins := map[string]bool{}
	for _, o := range allowedOrigins {
		origins[strings.TrimSuffix(strings.ToLower(o), "/")] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			host := strings.ToLower(r.Host)
			name := host
			if h, _, err := net.SplitHostPort(host); err == nil {
				name = h
			}
			if !hosts[host] && !hosts[name] && !isLoopbackName(name) {
				http.Error(rw, "Forbidden: this MCP server does not answer for the Host "+quote(r.Host), http.StatusForbidden)
				return
			}
			if o := r.Header.Get("Origin"); o != "" {
				u, err := url.Parse(o)
				if err != nil || (!origins[strings.TrimSuffix(strings.ToLower(o), "/")] && !isLoopbackName(u.Hostname())) {
					http.Error(rw, "Forbidden: requests from the Origin "+quote(o)+" are not allowed (http.allowed_origins)", http.StatusForbidden)
					return
				}
			}
			next.ServeHTTP(rw, r)
		})
	}
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	return "\"" + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return '?'
		}
		return r
	}, s) + "\""
}

// isLoopbackName reports whether a host name (no port) is a loopback one.
func isLoopbackName(h string) bool {
	h = strings.Trim(h, "[]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// isLoopbackAddr reports whether a listen address binds loopback only.
func isLoopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	return err == nil && h != "" && isLoopbackName(h)
}

// bearer is one configured token, kept as its hash so that the comparison
// takes the same time whatever the token sent.
type bearer struct {
	sum      [sha256.Size]byte
	identity toolctx.Identity
}

// tokenVerifier authenticates the bearer tokens of the configuration, read
// from the proxy's environment at start.
func tokenVerifier(tokens []TokenConfig) httpmw.VerifyFunc {
	var known []bearer
	for _, t := range tokens {
		known = append(known, bearer{sum: sha256.Sum256([]byte(os.Getenv(t.TokenEnv))),
			identity: toolctx.Identity{Subject: t.Subject, Scopes: slices.Clone(t.Scopes)}})
	}
	return func(r *http.Request) (toolctx.Identity, error) {
		h := r.Header.Get("Authorization")
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
			return toolctx.Identity{}, httpmw.ErrNoCredentials
		}
		sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		found := -1
		for i := range known {
			if subtle.ConstantTimeCompare(sum[:], known[i].sum[:]) == 1 {
				found = i
			}
		}
		if found < 0 {
			return toolctx.Identity{}, errs.Unauthenticated("the bearer token is not valid")
		}
		id := known[found].identity
		id.Scopes = slices.Clone(id.Scopes)
		return id, nil
	}
}
