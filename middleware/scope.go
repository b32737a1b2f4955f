package middleware

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// ScopePolicy says which scopes a caller must hold to call each tool.
type ScopePolicy struct {
	// Tools maps a tool's name to the scopes its caller must hold, all of
	// them.
	Tools map[string][]string
	// Default is what the tools not in Tools need. Nil admits every call
	// to them, authenticated or not; set it (to a scope every caller of
	// this server holds, say) to deny unlisted tools by default.
	Default []string
}

// RequireScopes admits a call only when the caller holds every scope its
// tool needs under p, as the caller's identity says ([toolctx.Request]'s
// Identity: set by httpmw.Authenticate, or by the go-sdk's
// auth.RequireBearerToken through the mcpsdk adapter). Otherwise the call is
// rejected before the interceptors inside and the handler run:
//
//   - no identity: the public [errs.CodeUnauthenticated] error "calling
//     \"deploy\" needs an authenticated caller";
//   - scopes missing: the public [errs.CodePermissionDenied] error "calling
//     \"deploy\" needs the scope \"deploy:prod\"", detail
//     {"missing_scopes": ["deploy:prod"]}.
//
// The rejection names only the scopes the tool needs and the caller lacks:
// never the caller's token, subject or other scopes. The audit row has its
// code and the caller's subject; Diagnostics is not called.
//
// RequireScopes is the per-tool part of authorization, and it composes
// with the HTTP part rather than replacing it. On the go-sdk, put
// auth.RequireBearerToken in front of the streamable HTTP handler: it
// verifies the token, answers 401 with the WWW-Authenticate challenge
// that points to your RFC 9728 protected-resource metadata
// (RequireBearerTokenOptions.ResourceMetadataURL, served by
// auth.ProtectedResourceMetadataHandler, whose ScopesSupported should list
// the per-tool scopes too), and enforces the scopes every call needs
// (RequireBearerTokenOptions.Scopes). The mcpsdk adapter turns its
// TokenInfo into Request.Identity (UserID as subject, Scopes), which is
// what RequireScopes reads. A policy mistake (an empty tool name or
// scope, a scope with white space in it) panics, at construction. In
// observe mode ([Observe]) a call it would reject runs, noted
// "would_reject=require_scopes".
func RequireScopes(p ScopePolicy) toolctx.Middleware {
	tools := make(map[string][]string, len(p.Tools))
	for tool, scopes := range p.Tools {
		if tool == "" {
			panic("middleware.RequireScopes: a tool name is empty")
		}
		tools[tool] = checkScopes(tool, scopes)
	}
	def := checkScopes("Default", p.Default)
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			need, ok := tools[req.Tool]
			if !ok {
				need = def
			}
			if len(need) == 0 {
				return next.CallTool(ctx, req)
			}
			if req.Identity == nil {
				return reject(ctx, guardRequireScopes, toolctx.ErrorResult(errs.Unauthenticated(fmt.Sprintf("calling %q needs an authenticated caller", req.Tool))), next, req)
			}
			var missing []string
			for _, s := range need {
				if !slices.Contains(req.Identity.Scopes, s) {
					missing = append(missing, s)
				}
			}
			if missing == nil {
				return next.CallTool(ctx, req)
			}
			return reject(ctx, guardRequireScopes, toolctx.ErrorResult(errs.PermissionDenied(scopeMessage(req.Tool, missing)).
				WithDetail(map[string]any{"missing_scopes": missing})), next, req)
		})
	}
}

// checkScopes returns a copy of scopes without repeats, panicking on an
// empty one or one with white space in it, which no caller can hold (an
// OAuth token's scopes are separated by spaces: RFC 6749, section 3.3),
// so that a policy that can never admit a call fails at construction.
func checkScopes(what string, scopes []string) []string {
	var out []string
	for _, s := range scopes {
		if strings.TrimSpace(s) == "" {
			panic(fmt.Sprintf("middleware.RequireScopes: %s has an empty scope", what))
		}
		if strings.ContainsFunc(s, unicode.IsSpace) {
			panic(fmt.Sprintf("middleware.RequireScopes: %s has the scope %q, with white space, which no caller can hold (scopes are separated by spaces)", what, s))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func scopeMessage(tool string, missing []string) string {
	if len(missing) == 1 {
		return fmt.Sprintf("calling %q needs the scope %q", tool, missing[0])
	}
	q := make([]string, len(missing))
	for i, s := range missing {
		q[i] = fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("calling %q needs the scopes %s", tool, strings.Join(q, ", "))
}
