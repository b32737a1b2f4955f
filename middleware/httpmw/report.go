package httpmw

import (
	"context"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Report is what the layers of this package learn about one HTTP request
// that a layer outside them records: the request id ([RequestID]), the
// caller's identity ([Authenticate]) and the public error a layer answered
// with. An outer layer that writes one row per request (audit.HTTP) puts a
// Report in the request's context with [WithReport] and reads it once the
// inner handler returns. A Report is used by the request's own goroutine
// only (net/http serves a request on one goroutine). Its fields are what
// the client was told or sent: never a raw error.
type Report struct {
	// RequestID is the request's id, when a layer set one.
	RequestID string
	// Identity is the authenticated caller, when a layer verified one.
	Identity *toolctx.Identity
	// Public is the public error the request was answered with, when a
	// layer answered with one.
	Public *errs.Public
}

type reportKey struct{}

// WithReport returns ctx carrying r, for the layers inside to fill.
func WithReport(ctx context.Context, r *Report) context.Context {
	return context.WithValue(ctx, reportKey{}, r)
}

// ReportFrom returns the Report in ctx, or nil.
func ReportFrom(ctx context.Context) *Report {
	r, _ := ctx.Value(reportKey{}).(*Report)
	return r
}

func reportRequestID(ctx context.Context, id string) {
	if r := ReportFrom(ctx); r != nil && id != "" {
		r.RequestID = id
	}
}

func reportIdentity(ctx context.Context, id *toolctx.Identity) {
	if r := ReportFrom(ctx); r != nil && id != nil {
		r.Identity = id
	}
}

func reportPublic(ctx context.Context, pub errs.Public) {
	if r := ReportFrom(ctx); r != nil {
		r.Public = &pub
	}
}
