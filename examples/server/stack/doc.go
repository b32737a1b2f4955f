// Package stack builds the demo server's MCP server: its six tools and the
// recommended chain in front of them (package serve's), with the demo's
// guards. The command in examples/server adds flags, the audit store
// (serve.OpenAudit), the HTTP handler (serve.Handler), logging, telemetry
// and shutdown around it; the benchmarks (package bench) measure the same
// server, so that what is measured is what the demo runs.
package stack
