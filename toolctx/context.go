package toolctx

import "context"

type identityKey struct{}

type requestIDKey struct{}

// WithIdentity returns a copy of ctx that carries the authenticated caller.
// An HTTP authentication layer sets it; adapters copy it into
// [Request.Identity].
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, &id)
}

// IdentityFrom returns the caller set by [WithIdentity], or nil. The zero
// Identity (no subject, no scopes) is no caller: WithIdentity(ctx,
// Identity{}) hides one that ctx carried, and IdentityFrom returns nil.
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	if id == nil || (id.Subject == "" && len(id.Scopes) == 0) {
		return nil
	}
	return id
}

// WithRequestID returns a copy of ctx that carries an HTTP request id.
// Adapters copy it into [Request.RequestID].
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id set by [WithRequestID], or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
