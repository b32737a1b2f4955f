// Command toolmw-proxy puts toolmw's chain in front of any MCP server, in
// any language, with no change to it: an npm or PyPI package it starts over
// stdio, or an HTTP service someone else runs. Every tools/call gets its
// audit row (SQLite by default, PostgreSQL for a fleet), diagnostics,
// deadlines, scope checks and rate limits, secret scrubbing and traces, and
// the one rule holds: the audit row may name the cause; the caller may not.
//
//	go run ./cmd/toolmw-proxy -- npx -y @modelcontextprotocol/server-everything
//	go run ./cmd/toolmw-proxy -stdio -- python -m my_server      # for a client that starts servers over stdio
//	go run ./cmd/toolmw-proxy -upstream http://127.0.0.1:9000/mcp # an HTTP upstream
//	go run ./cmd/toolmw-proxy -config proxy.yaml                  # everything else
//	go run ./examples/audit -db toolmw-audit.db                   # the rows
//
// It serves MCP to its clients over streamable HTTP at /mcp (stateful, or
// -stateless; HTTP+SSE for 2024-11-05 clients at /sse) on 127.0.0.1:8081,
// or over its own stdin and stdout with -stdio, and forwards to one
// upstream: the command after "--", started over stdio, or -upstream URL
// (streamable HTTP, or HTTP+SSE with upstream.transport: sse).
//
// # What it forwards
//
// The upstream's tools are mirrored in the proxy's own tool table (so that
// the toolmw adapter, toolctx/mcpsdk, runs the chain around every call and
// knows an unknown tool), and kept in step with its tools/list_changed
// notifications and restarts. Resources, resource templates, prompts,
// completions, subscriptions and the logging level are forwarded as they are,
// with their pagination cursors; the upstream's capabilities, instructions
// and name are the proxy's. The upstream's notifications reach the clients:
// progress (under each client's own token), log messages (each session at
// the level it set), list changes and resource updates; a client's
// cancellation reaches the upstream. The upstream's sampling and
// elicitation requests go to the client whose call they belong to (see
// Sampling and elicitation). Each side negotiates its own protocol version
// with go-sdk (2026-07-28 included; go-sdk serves 2026-07-28 on streamable
// HTTP only stateless, so a client on it needs -stateless, and an HTTP
// upstream on it is a stateless one). The upstream's roots/list requests
// go to the call's client as sampling does, though the proxy's client
// declares no roots (a client's roots vary with the client), so that an
// upstream that asks without the capability gets the client's roots,
// not the proxy's empty list.
//
// # What the chain can know
//
//   - The upstream's answer is a result: the client gets it as it is. An
//     isError result is the tool's own feedback: public, passed as it is,
//     or scrubbed by middleware.ScrubSecrets when scrub_secrets is set.
//   - The upstream's answer is a JSON-RPC error: a raw failure. The client
//     gets the generic internal failure; the audit row and diagnostics get
//     the upstream's code, message and data. (A URL elicitation, -32042,
//     passes as the protocol error it is, in the adapter's checked shape.)
//   - The upstream dies, hangs (a ping unanswered for upstream.ping_timeout)
//     or answers what is not JSON-RPC: every call in flight is an internal
//     failure whose row says why ("the upstream process exited: signal:
//     killed"), the process group is killed, and the upstream is started
//     again after a backoff (upstream.restart_min doubling to restart_max),
//     which the log says. A call that arrives while it restarts waits for it;
//     no call outlives its deadline (timeouts.call, or the tool's own).
//   - A method other than tools/call that the upstream fails reaches the
//     client as the upstream's JSON-RPC code with the protocol's own words
//     for it, never the upstream's text (logged instead).
//
// # Secure by default
//
// The proxy listens on loopback; it refuses a wider address unless
// auth.tokens is configured (bearer tokens, each read from an environment
// variable, checked by httpmw.Authenticate), and per-tool scopes
// (tools.NAME.scopes, default_scopes) are middleware.RequireScopes. Every
// request's Host must be a loopback name, the listen address or one of
// http.allowed_hosts, and its Origin, when it has one, a loopback origin or
// one of http.allowed_origins (the DNS-rebinding check the MCP
// specification asks of HTTP servers). The upstream command starts with a
// minimal environment — PATH, HOME, the locale (LANG, LC_ALL, LC_CTYPE), TZ,
// TMPDIR and the TLS trust store's paths (SSL_CERT_FILE, SSL_CERT_DIR,
// NODE_EXTRA_CA_CERTS) — plus only the variables upstream.pass_env names and those
// upstream.env sets: never the proxy's own environment, which holds its
// audit DSN, its tokens and whatever else the operator exported.
//
// # Configuration
//
// One file, YAML or JSON (the same keys), read at start and checked
// strictly: a misspelt key, a value of the wrong type or out of range is an
// error that names the file and the line. proxy.example.yaml, next to this
// file, shows every field with its default; Config is the schema. The
// flags override the fields they name:
//
//	-addr host:port        streamable HTTP at /mcp (default 127.0.0.1:8081)
//	-stdio                 serve over stdin/stdout instead (logs go to stderr)
//	-stateless             stateless streamable HTTP
//	-audit-db path         SQLite audit database (audit.sqlite; default toolmw-audit.db)
//	-audit-postgres DSN    PostgreSQL audit store (or audit.postgres_env)
//	-audit-table name      the audit table (audit.table)
//	-audit-spool dir       where rows wait while the store is down (audit.spool)
//	-audit-durability m    memory (default) or disk (audit.durability): when a
//	                       call is answered; see package serve for what each
//	                       loses on SIGKILL and power loss
//	-otlp-logs-endpoint URL also send every row over OTLP/HTTP
//	-config file           the configuration file
//	-upstream URL          the upstream's URL (upstream.url), instead of a command after --
//	-shutdown-timeout d    how long calls in flight may finish after SIGINT/SIGTERM
//
// observe: true in the file runs the guards (scopes, rate limits,
// scrub_secrets) in observe mode (middleware.Observe), to roll them out:
// each decides as usual and notes would_reject=<guard> on the audit row,
// and refuses, changes and hides nothing. tools/list follows the scope
// guard itself (middleware.Visibility): enforced, a caller sees only the
// tools it may call; observed, every tool.
//
// # Why cmd/
//
// It is a program operators install and run as it is (go install
// github.com/toolmw/toolmw/cmd/toolmw-proxy@latest), with a configuration
// schema it keeps stable, not a program to read and copy as examples/ are;
// DESIGN.md names this place for it. It builds on package serve, as the
// demo does: the audit flags and their opening, the recommended chain and
// the HTTP stack (its session cap, write deadlines and HTTP audit rows),
// so that the proxy runs what the demo's tests and the benchmarks measure.
//
// # Sampling and elicitation
//
// An upstream's sampling, elicitation and roots requests go to the client
// whose call they belong to. A streamable HTTP upstream sends each on its
// call's own response stream, which the proxy follows. A stdio or HTTP+SSE
// upstream names no call: the proxy asks the one client session with calls
// in flight, and refuses the request (a JSON-RPC error to the upstream)
// when several sessions have calls in flight, rather than ask a client
// whose call it is not. A client below protocol 2026-07-28 gets the
// request as it is. A server may send a client on 2026-07-28 no request
// (SEP-2322; go-sdk's server refuses to), so for such a client the proxy
// bridges an upstream below 2026-07-28 (bridge.go): it answers the
// client's tools/call input-required with the request and a random state
// naming the upstream's call, which stays open, parked; the client's next
// call with the answers and the state resumes it, and gets the upstream's
// result or its next request. A parked call waits bridge.resume_timeout
// (60s) for its client and is then cancelled upstream; at most
// bridge.max_parked (1000) are parked at once; a state unknown, expired or
// another caller's is the public invalid-arguments answer "unknown or
// expired request state". docs/proxy.md has the table.
//
// On 2026-07-28 an upstream asks for input in its answer instead: a
// tools/call, prompts/get or resources/read answered input-required, with
// the requests (an elicitation, a sampling, roots) and a state to echo
// (multi round-trip requests, SEP-2322). A client on 2026-07-28 gets that
// answer as it is, fulfils it with its own handlers and calls again; the
// proxy forwards the answers and the state, and each round of a tools/call
// is a call of its own, with its row (input_required, then the final
// outcome). For a client below 2026-07-28 the proxy asks it itself, with
// the requests of its protocol on the call's own stream, and calls the
// upstream again, up to ten rounds within the client's one call: one row.
// mrtr_test.go tests both, for an elicitation, a sampling and a call that
// asks for both in turn, with the client over stdio and streamable HTTP and
// the upstream over stdio and streamable HTTP, a call that asks for the
// client's roots, a prompts/get and a resources/read.
package main
