// Package shapes builds hostile failures for the canary tests of every
// package: errors and panic values that carry a secret (the canary) in as
// many ways as we could think of, including errors whose methods panic,
// cyclic Unwrap chains, typed nils, huge messages and fmt.Formatter values.
// Each [Case] says what the one rule expects of it: the canary never
// reaches the client, and the server side (the cause, diagnostics, the
// audit row) still carries it.
//
// It is test support: the one hostile error set, shared by the tests of
// errs' users (middleware, audit, the adapters) and by toolmwtest's
// generated failures; no production code imports it.
package shapes
