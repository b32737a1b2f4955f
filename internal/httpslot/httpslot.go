// Package httpslot carries what the HTTP layers inside audit.HTTP learn
// (the request id, the caller's identity, the public error they answered
// with) back out to audit.HTTP's row. audit.HTTP puts a Slot in the
// request's context; the layers of middleware/httpmw fill it, so their rows
// need no help from the user.
package httpslot

import (
	"context"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Slot is what one HTTP request's row is told. It is used by the request's
// own goroutine only (net/http serves a request on one goroutine).
type Slot struct {
	RequestID string
	Identity  *toolctx.Identity
	Public    *errs.Public
}

type key struct{}

// With returns ctx carrying s.
func With(ctx context.Context, s *Slot) context.Context {
	return context.WithValue(ctx, key{}, s)
}

// From returns the Slot in ctx, or nil.
func From(ctx context.Context) *Slot {
	s, _ := ctx.Value(key{}).(*Slot)
	return s
}

// SetRequestID records the request's id, when ctx has a Slot.
func SetRequestID(ctx context.Context, id string) {
	if s := From(ctx); s != nil && id != "" {
		s.RequestID = id
	}
}

// SetIdentity records the caller's identity, when ctx has a Slot.
func SetIdentity(ctx context.Context, id *toolctx.Identity) {
	if s := From(ctx); s != nil && id != nil {
		s.Identity = id
	}
}

// SetPublic records the public error the request was answered with, when
// ctx has a Slot. pub must be what the client was told.
func SetPublic(ctx context.Context, pub errs.Public) {
	if s := From(ctx); s != nil {
		s.Public = &pub
	}
}
