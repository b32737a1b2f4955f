// Package sqlstore is the SQL audit store: an [audit.Sink] that writes
// [audit.Record] rows to SQLite (pure Go, a file path is all it needs) or
// PostgreSQL (for a fleet of servers sharing one log), and [Store.Query],
// which reads them back for an operator. See docs/audit.md (the table, its
// columns and indexes, refused rows) and docs/fleet.md (PostgreSQL shared
// by replicas).
//
// Importing it builds both drivers; importing package audit builds
// neither. The table ([Config.Table], default "toolmw_audit") is created
// or upgraded on open; a table written by a newer toolmw is refused with
// [ErrNewerSchema]. Put the store behind [audit.NewAsync] with an
// [audit.Spool]: it is an [audit.OnceSink], so a replayed batch is written
// exactly once.
package sqlstore
