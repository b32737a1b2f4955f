// Package jsonclone deep-copies JSON-shaped values (maps, slices and
// scalars), so that a value handed out cannot change the one kept: an
// errs.Error's public detail, a request's _meta.
package jsonclone
