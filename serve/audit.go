package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/otlplog"
	"github.com/toolmw/toolmw/audit/sqlstore"
)

// DefaultSQLite is the SQLite audit database's path when none is given.
const DefaultSQLite = "toolmw-audit.db"

// DefaultPostgresSpool is the spool directory with PostgreSQL when none is
// given (with SQLite it is the database's path + ".spool").
const DefaultPostgresSpool = "toolmw-audit.spool"

// AuditConfig says which audit store [OpenAudit] opens and how the writer
// in front of it behaves. [AddAuditFlags] registers the flags that set it,
// the same on every command that serves calls.
type AuditConfig struct {
	// SQLite is the SQLite database's path (created if missing), the store
	// unless Postgres is set (-audit-db). Required without Postgres.
	SQLite string
	// Postgres is a PostgreSQL DSN; when set, it is the store and SQLite
	// is not used (-audit-postgres).
	Postgres string
	// Table is the audit table's name (-audit-table); empty:
	// sqlstore.DefaultTable.
	Table string
	// Spool is the local directory where rows wait while the store is down
	// (-audit-spool); empty: the SQLite path + ".spool", or
	// DefaultPostgresSpool with PostgreSQL.
	Spool string
	// Durability is when a call may be answered (-audit-durability):
	// audit.DurabilityMemory (the zero value) once its row is queued,
	// audit.DurabilityDisk once it is synced in the spool. See the
	// package documentation for what each loses; disk's cost is a sync
	// per call (its tool row's, shared with the rows queued with it) and
	// more server CPU per call (BenchmarkDurability, docs/serving.md).
	Durability audit.Durability
	// OTLPLogs, when set, is an OTLP/HTTP endpoint URL that also gets every
	// row as a log record (-otlp-logs-endpoint), through a writer and a
	// spool of its own (Spool + "-otlp").
	OTLPLogs string
	// Settings names, for the startup errors' hints, where the operator
	// sets each field. Its zero fields are the flags AddAuditFlags
	// registers.
	Settings AuditSettings
}

// AuditSettings names where the operator sets each field of
// [AuditConfig], as the startup errors' hints say it: "-audit-postgres or
// $TOOLMW_AUDIT_POSTGRES", "-audit-table or audit.table". An empty field
// is the flag [AddAuditFlags] registers for it.
type AuditSettings struct {
	SQLite, Postgres, Table, Spool, OTLPLogs string
}

func (s AuditSettings) withDefaults() AuditSettings {
	for _, f := range []struct {
		v   *string
		def string
	}{{&s.SQLite, "-audit-db"}, {&s.Postgres, "-audit-postgres"}, {&s.Table, "-audit-table"},
		{&s.Spool, "-audit-spool"}, {&s.OTLPLogs, "-otlp-logs-endpoint"}} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
	return s
}

// AddAuditFlags registers on fs the audit flags every command that serves
// calls takes, with one meaning: -audit-db, -audit-postgres, -audit-table,
// -audit-spool, -audit-durability and -otlp-logs-endpoint, each setting
// its field of c. c's fields as they are are the defaults; an empty
// c.SQLite defaults to [DefaultSQLite].
func AddAuditFlags(fs *flag.FlagSet, c *AuditConfig) {
	if c.SQLite == "" {
		c.SQLite = DefaultSQLite
	}
	fs.StringVar(&c.SQLite, "audit-db", c.SQLite, "SQLite audit database `path` (created if missing)")
	fs.StringVar(&c.Postgres, "audit-postgres", c.Postgres, "PostgreSQL audit store `DSN` (overrides -audit-db)")
	fs.StringVar(&c.Table, "audit-table", c.Table, "audit table `name` (default "+sqlstore.DefaultTable+")")
	fs.StringVar(&c.Spool, "audit-spool", c.Spool, "local `directory` where audit rows wait while the store is down (default: the -audit-db path + .spool, or "+DefaultPostgresSpool+" with PostgreSQL)")
	fs.Var((*durabilityFlag)(&c.Durability), "audit-durability", "when a call is answered: `memory` (its row is queued; SIGKILL loses up to the queue) or disk (its row is fsync'd in the spool first; nothing answered is lost)")
	fs.StringVar(&c.OTLPLogs, "otlp-logs-endpoint", c.OTLPLogs, "also send every audit row as an OpenTelemetry log record over OTLP/HTTP to this `URL` (e.g. http://127.0.0.1:4318; the path defaults to /v1/logs); rows wait in the -audit-spool directory + \"-otlp\" while it is down")
}

// ParseDurability reads "memory" or "disk", the values of
// -audit-durability.
func ParseDurability(s string) (audit.Durability, error) {
	switch s {
	case "memory":
		return audit.DurabilityMemory, nil
	case "disk":
		return audit.DurabilityDisk, nil
	}
	return 0, fmt.Errorf("want memory or disk, not %q", s)
}

// durabilityFlag is -audit-durability's flag.Value.
type durabilityFlag audit.Durability

func (d *durabilityFlag) String() string {
	if d != nil && audit.Durability(*d) == audit.DurabilityDisk {
		return "disk"
	}
	return "memory"
}

func (d *durabilityFlag) Set(s string) error {
	v, err := ParseDurability(s)
	if err == nil {
		*d = durabilityFlag(v)
	}
	return err
}

// Check reports what is wrong with c that needs no store to see: no store
// named, or an OTLP endpoint that is not an http(s) URL. A command reports
// it as a usage error, before it opens anything.
func (c AuditConfig) Check() error {
	set := c.Settings.withDefaults()
	if c.Postgres == "" && c.SQLite == "" {
		return fmt.Errorf("%s must name a file (or pass %s)", set.SQLite, set.Postgres)
	}
	if c.Durability != audit.DurabilityMemory && c.Durability != audit.DurabilityDisk {
		return fmt.Errorf("the audit durability %d is neither memory nor disk", int(c.Durability))
	}
	if c.OTLPLogs != "" {
		if u, err := url.Parse(c.OTLPLogs); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s must be an http:// or https:// URL such as http://127.0.0.1:4318, not %q", set.OTLPLogs, c.OTLPLogs)
		}
	}
	return nil
}

// AuditLog is an open audit store, the local spool that absorbs its
// outages and the asynchronous writer in front of them, and, with
// AuditConfig.OTLPLogs, the OTLP sink with its own writer and spool.
// Open one with [OpenAudit]; Close it last, after serving.
type AuditLog struct {
	store  *sqlstore.Store
	w      *audit.Async
	otlp   *otlplog.Sink // nil without OTLPLogs
	otlpW  *audit.Async
	where  string
	logger *slog.Logger
}

// OpenAudit opens the store c names (PostgreSQL when c.Postgres is set,
// SQLite otherwise) and the spool, and starts the writer: a call never
// waits on the store, an outage is absorbed by the spool and replayed once
// the store is back. The writer's and the spool's warnings, and the
// last-resort fallback (a row no store would take), go to logger, which is
// required.
//
// Its errors are the operator's startup errors: one line each, naming the
// cause once and only the setting that applies (c.Settings), such as
//
//	cannot open the PostgreSQL audit store: ...: connection refused (fix -audit-postgres)
func OpenAudit(ctx context.Context, c AuditConfig, logger *slog.Logger) (*AuditLog, error) {
	if logger == nil {
		return nil, errors.New("serve: OpenAudit: the logger is nil")
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	set := c.Settings.withDefaults()
	store, where, err := openStore(ctx, c, set)
	if err != nil {
		return nil, err
	}
	spoolDir := c.Spool
	if spoolDir == "" {
		spoolDir = DefaultPostgresSpool
		if c.Postgres == "" {
			spoolDir = strings.SplitN(c.SQLite, "?", 2)[0] + ".spool"
		}
	}
	spool, err := audit.OpenSpool(spoolDir, audit.SpoolConfig{FallbackLogger: logger})
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("%v (pass %s with a writable directory)", err, set.Spool)
	}
	w := audit.NewAsync(store, audit.AsyncConfig{Spool: spool, FallbackLogger: logger, // logs its Stats on Close
		Durability: c.Durability})
	a := &AuditLog{store: store, w: w, where: where, logger: logger}
	if c.OTLPLogs != "" {
		if err := a.openOTLP(ctx, c.OTLPLogs, spoolDir+"-otlp", set); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// openOTLP opens the OTLP sink, its spool and its writer.
func (a *AuditLog) openOTLP(ctx context.Context, endpoint, spoolDir string, set AuditSettings) error {
	sink, err := otlplog.New(ctx, endpoint, otlplog.Config{FallbackLogger: a.logger})
	if err != nil {
		return fmt.Errorf("%v (fix %s)", err, set.OTLPLogs)
	}
	spool, err := audit.OpenSpool(spoolDir, audit.SpoolConfig{FallbackLogger: a.logger})
	if err != nil {
		_ = sink.Close(ctx)
		return fmt.Errorf("%v (pass %s with a writable directory: the OTLP rows wait in it + \"-otlp\")", err, set.Spool)
	}
	a.otlp = sink
	a.otlpW = audit.NewAsync(sink, audit.AsyncConfig{Spool: spool, FallbackLogger: a.logger})
	a.logger.Info("audit rows also go over OTLP/HTTP", "endpoint", endpoint, "spool", spoolDir)
	return nil
}

// Emitter is where the chain's rows go: the store's writer, and the OTLP
// writer too when there is one. Each writer has its own queue and spool:
// an outage of one never delays or loses the other's rows.
func (a *AuditLog) Emitter() audit.Emitter {
	if a.otlpW == nil {
		return a.w
	}
	return audit.EmitterFunc(func(ctx context.Context, r audit.Record) {
		a.w.Emit(ctx, r)
		a.otlpW.Emit(ctx, r)
	})
}

// Where names the store, for a banner or a log line: "SQLite PATH" or
// "PostgreSQL".
func (a *AuditLog) Where() string { return a.where }

// SQLitePath is the SQLite database's path, or "" when the store is
// PostgreSQL.
func (a *AuditLog) SQLitePath() string {
	p, ok := strings.CutPrefix(a.where, "SQLite ")
	if !ok {
		return ""
	}
	return p
}

// Close flushes the writers' queues into the store and the OTLP receiver
// (what they do not take stays in the spools for the next start), then
// closes the store and the sink, within 10 seconds. What fails is logged.
func (a *AuditLog) Close() {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if a.otlpW != nil {
		if err := a.otlpW.Close(cctx); err != nil {
			a.logger.Error("OTLP audit writer did not flush in time", "err", err)
		}
		if err := a.otlp.Close(cctx); err != nil {
			a.logger.Error("closing the OTLP audit sink", "err", err)
		}
	}
	if err := a.w.Close(cctx); err != nil {
		a.logger.Error("audit writer did not flush in time", "err", err)
	}
	if err := a.store.Close(); err != nil {
		a.logger.Error("closing the audit store", "err", err)
	}
}

func openStore(ctx context.Context, c AuditConfig, set AuditSettings) (*sqlstore.Store, string, error) {
	if c.Postgres != "" {
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s, err := sqlstore.OpenPostgres(octx, c.Postgres, sqlstore.Config{Table: c.Table})
		if err != nil {
			hint := "fix " + set.Postgres
			if tableProblem(err) {
				hint = "fix " + set.Table + ", or use another database"
			}
			return nil, "", fmt.Errorf("cannot open the PostgreSQL audit store: %s (%s)", once(err.Error()), hint)
		}
		return s, "PostgreSQL", nil
	}
	s, err := sqlstore.OpenSQLite(ctx, c.SQLite, sqlstore.Config{Table: c.Table})
	if err != nil {
		hint := "pass " + set.SQLite + " with a writable file path"
		switch {
		case tableProblem(err):
			hint = "fix " + set.Table + ", or pass " + set.SQLite + " with another file"
		case strings.Contains(err.Error(), "does not exist"):
			hint = "create the directory, or pass " + set.SQLite + " with a file path in one that exists"
		}
		return nil, "", fmt.Errorf("cannot open the audit database %q: %v (%s)", c.SQLite, err, hint)
	}
	return s, "SQLite " + c.SQLite, nil
}

// tableProblem reports whether err is about the audit table (its name, or
// a table toolmw did not make or a newer toolmw did), not the database.
func tableProblem(err error) bool {
	return errors.Is(err, sqlstore.ErrNotAudit) || errors.Is(err, sqlstore.ErrNewerSchema) ||
		strings.Contains(err.Error(), "invalid table name") || strings.Contains(err.Error(), "of a toolmw audit table")
}

// once returns msg with a repeated tail said once: pgx reports each
// attempt of a connection (with TLS, then without), so a closed port's
// dial error arrives twice, "... X X".
func once(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ") // pgx puts a newline between attempts
	for i := 0; i < len(msg); i++ {
		tail := msg[i:]
		if n := len(tail); n%2 == 1 && n > 1 {
			half := tail[:n/2]
			if tail[n/2] == ' ' && half == tail[n/2+1:] && strings.TrimSpace(half) != "" {
				return msg[:i] + half
			}
		}
	}
	return msg
}
