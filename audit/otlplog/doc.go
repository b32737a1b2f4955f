// Package otlplog is an audit [audit.Sink] that ships each row as an
// OpenTelemetry log record over OTLP/HTTP, to a Collector or any backend
// that takes OTLP logs. See docs/fleet.md for delivery and the record's
// attributes. It is its own package so that importing audit builds no
// OpenTelemetry.
//
//	sink, err := otlplog.New(ctx, "http://127.0.0.1:4318", otlplog.Config{})
//	if err != nil { return err }
//	spool, err := audit.OpenSpool("/var/lib/app/otlp.spool", audit.SpoolConfig{})
//	if err != nil { return err }
//	w := audit.NewAsync(sink, audit.AsyncConfig{Spool: spool})
//	defer sink.Close(ctx)
//	defer w.Close(ctx) // runs first: flushes the queue into the sink
//
// Behind an [audit.Async] with an [audit.Spool], a batch the receiver did
// not take is replayed when it answers again; a 413 (over the receiver's
// size limit) splits the batch until it fits, and a single row still too
// large goes to the fallback sink, counted in [audit.Stats].Refused. Delivery is at least once: a
// backend that must not count a row twice deduplicates on toolmw.call.id.
// Attributes use the semantic conventions' names where they have one and
// the prefix "toolmw." ([Prefix]) for the rest.
package otlplog
