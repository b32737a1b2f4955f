// Package otlplog is an audit [audit.Sink] that ships each row as an
// OpenTelemetry log record over OTLP/HTTP (protobuf), to a Collector or any
// backend that takes OTLP logs. It is its own package so that importing
// audit builds no OpenTelemetry.
//
//	sink, err := otlplog.New(ctx, "http://127.0.0.1:4318", otlplog.Config{})
//	if err != nil { return err }
//	spool, err := audit.OpenSpool("/var/lib/app/otlp.spool", audit.SpoolConfig{})
//	if err != nil { return err }
//	w := audit.NewAsync(sink, audit.AsyncConfig{Spool: spool})
//	defer sink.Close(ctx)
//	defer w.Close(ctx) // runs first: flushes the queue into the sink
//
// # Delivery
//
// [Sink.WriteBatch] sends the batch in one export request and returns only
// when the receiver has answered: nil when it took the request, an error
// when it could not be reached, answered with a failure status or did not
// answer in time. The exporter's own retries are off: behind an
// [audit.Async] with an [audit.Spool], a batch the receiver did not take is
// spooled on local disk and replayed, oldest first, when it answers again,
// so a Collector restart or outage loses nothing the spool can hold (only a
// full spool drops rows, counted in [audit.Stats] and logged). A receiver
// that accepts a request but rejects some of its records (an OTLP partial
// success) has taken the request: sending it again would not change its
// mind, so the rejection is logged to [Config.FallbackLogger] and the
// batch counts as written. Delivery is at least once: a batch whose
// answer was lost (a timeout after the receiver took it) is sent again, so
// a backend that must not count a row twice deduplicates on toolmw.call.id
// (tool rows) or the record's time and toolmw.request.id (HTTP rows).
//
// # The log record
//
// Every row is one log record: its timestamp is the row's time, its event
// name [EventName], its body [audit.SlogMessage] (as [audit.SlogSink]
// writes), its severity the row's level ([audit.Record.Level]: INFO, WARN
// or ERROR), and its trace and span ids the row's TraceID and SpanID (the
// record's own fields, so a backend joins the row with its trace). The
// attributes use the OpenTelemetry semantic conventions' names where they
// have one:
//
//	gen_ai.tool.name           the tool (tool rows)
//	mcp.method.name            tools/call (tool rows)
//	mcp.session.id             the MCP session id, where the transport has one
//	error.type                 a failure's class, as otelmw's spans have it: the
//	                           JSON-RPC code for a protocol error (unknown tool,
//	                           malformed request), tool_error for any other failed
//	                           call; the status code of a failed HTTP request
//	enduser.id                 the caller's subject (never a credential)
//	http.request.method        HTTP rows
//	url.path                   HTTP rows, without the query
//	http.response.status_code  HTTP rows
//
// and everything else under the one prefix "toolmw." ([Prefix]), with the
// names otelmw gives the same values on spans where it has them:
//
//	toolmw.kind          tool or http
//	toolmw.call.id       the call's correlation id (as otelmw's span)
//	toolmw.request.id    the HTTP request id
//	toolmw.transport     the MCP transport (stdio, streamable-http, sse, ...)
//	toolmw.task.id       the task the call ran as
//	toolmw.outcome       ok, error, rejected, canceled, timeout, panic, input_required
//	toolmw.error.code    the public error code (as otelmw's span)
//	toolmw.message       the public message, or the raw one where the caller's
//	                     was scrubbed (see package audit)
//	toolmw.duration      seconds, a double
//	toolmw.detail        the public detail, a map
//	toolmw.client_meta   the client's _meta (untrusted), a map
//	toolmw.arguments     the redacted arguments, JSON text (only with audit.WithArguments)
//	toolmw.notes         the interceptors' notes, a map of strings
//
// Empty fields are left out. The maps keep the JSON shapes of the row's
// values (strings, numbers, booleans, lists, maps); a value nested deeper
// than 8 levels is written as its JSON text.
package otlplog
