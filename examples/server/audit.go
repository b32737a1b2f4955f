package main

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

// This file is the demo's whole audit wiring: the store (-audit-db,
// -audit-postgres, -audit-table), the local spool that absorbs its outages
// (-audit-spool), the asynchronous writer in front of them and when it lets
// a call be answered (-audit-durability), the rows' copy to an
// OpenTelemetry Collector (-otlp-logs-endpoint), and their shutdown.
// Everything else takes the audit.Emitter (auditLog.emitter).

// durabilityFlag is -audit-durability: memory (the default) or disk.
//
// memory: a call is answered once its row is queued in memory. A clean
// stop (SIGINT, SIGTERM) writes every row; SIGKILL, a crash or a power
// loss loses the rows still queued (up to the queue's 8,192, and the batch
// being written: measured, 452 of 13,331 calls answered under load, 3.4%)
// and, on power loss, the spooled rows of the last second (the spool is
// fsync'd every second).
//
// disk: a call is answered once its row is fsync'd in the spool (the
// calls queued together share one fsync, a group commit); every batch
// goes through the spool. SIGKILL and a crash lose no answered call's row;
// a power loss neither, where the disk honours fsync. The cost: each call
// waits for two syncs in a row (its tool row's, then its HTTP row's) and
// the server spends more CPU per call (see BenchmarkDurability and
// docs/serving.md).
type durabilityFlag audit.Durability

func (d *durabilityFlag) String() string {
	if d != nil && audit.Durability(*d) == audit.DurabilityDisk {
		return "disk"
	}
	return "memory"
}

func (d *durabilityFlag) Set(s string) error {
	switch s {
	case "memory":
		*d = durabilityFlag(audit.DurabilityMemory)
	case "disk":
		*d = durabilityFlag(audit.DurabilityDisk)
	default:
		return fmt.Errorf("want memory or disk, not %q", s)
	}
	return nil
}

// auditLog is the open audit store and the writer in front of it, and,
// with -otlp-logs-endpoint, the OTLP sink and its own writer and spool.
type auditLog struct {
	store  *sqlstore.Store
	w      *audit.Async
	otlp   *otlplog.Sink // nil without -otlp-logs-endpoint
	otlpW  *audit.Async
	where  string // for the banner: "SQLite path" or "PostgreSQL"
	logger *slog.Logger
}

// addOTLPLogsFlag registers -otlp-logs-endpoint.
func addOTLPLogsFlag(fs *flag.FlagSet, endpoint *string) {
	fs.StringVar(endpoint, "otlp-logs-endpoint", "", "also send every audit row as an OpenTelemetry log record over OTLP/HTTP to this `URL` (e.g. http://127.0.0.1:4318; the path defaults to /v1/logs); rows wait in the -audit-spool directory + \"-otlp\" while it is down")
}

// checkOTLPLogs checks -otlp-logs-endpoint's URL, for a usage error.
func checkOTLPLogs(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Sprintf("-otlp-logs-endpoint must be an http:// or https:// URL such as http://127.0.0.1:4318, not %q", endpoint)}
	}
	return nil
}

// emitter is where the chain's rows go: the store's writer, and the OTLP
// writer too when there is one. Each writer has its own queue and spool:
// an outage of one never delays or loses the other's rows.
func (a *auditLog) emitter() audit.Emitter {
	if a.otlpW == nil {
		return a.w
	}
	return audit.EmitterFunc(func(ctx context.Context, r audit.Record) {
		a.w.Emit(ctx, r)
		a.otlpW.Emit(ctx, r)
	})
}

// openAudit opens the store that cfg names and the local spool, and starts
// the writer. The writer's and the spool's own warnings and the last-resort
// fallback (a batch the store would not take) go to logger.
func openAudit(ctx context.Context, cfg config, logger *slog.Logger) (*auditLog, error) {
	store, where, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	spoolDir := cfg.auditSpool
	if spoolDir == "" {
		spoolDir = "toolmw-audit.spool"
		if cfg.auditPostgres == "" {
			spoolDir = strings.SplitN(cfg.auditDB, "?", 2)[0] + ".spool"
		}
	}
	spool, err := audit.OpenSpool(spoolDir, audit.SpoolConfig{FallbackLogger: logger})
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("%v (pass -audit-spool with a writable directory)", err)
	}
	// The recommended configuration: a call never waits on the store; an
	// outage is absorbed by the spool and replayed once the store is back.
	w := audit.NewAsync(store, audit.AsyncConfig{Spool: spool, FallbackLogger: logger, // logs its Stats on Close
		Durability: audit.Durability(cfg.auditDurability)})
	al := &auditLog{store: store, w: w, where: where, logger: logger}
	if cfg.otlpLogs != "" {
		if err := al.openOTLP(ctx, cfg.otlpLogs, spoolDir+"-otlp"); err != nil {
			al.Close()
			return nil, err
		}
	}
	return al, nil
}

// openOTLP opens the OTLP sink, its spool and its writer.
func (a *auditLog) openOTLP(ctx context.Context, endpoint, spoolDir string) error {
	sink, err := otlplog.New(ctx, endpoint, otlplog.Config{FallbackLogger: a.logger})
	if err != nil {
		return fmt.Errorf("%v (fix -otlp-logs-endpoint)", err)
	}
	spool, err := audit.OpenSpool(spoolDir, audit.SpoolConfig{FallbackLogger: a.logger})
	if err != nil {
		_ = sink.Close(ctx)
		return fmt.Errorf("%v (pass -audit-spool with a writable directory: the OTLP rows wait in it + \"-otlp\")", err)
	}
	a.otlp = sink
	a.otlpW = audit.NewAsync(sink, audit.AsyncConfig{Spool: spool, FallbackLogger: a.logger})
	a.logger.Info("audit rows also go over OTLP/HTTP", "endpoint", endpoint, "spool", spoolDir)
	return nil
}

// Close flushes the writers' queues into the store and the OTLP receiver
// (what they do not take stays in the spools for the next start), then
// closes the store and the sink.
func (a *auditLog) Close() {
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

func openStore(ctx context.Context, cfg config) (*sqlstore.Store, string, error) {
	if cfg.auditPostgres != "" {
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s, err := sqlstore.OpenPostgres(octx, cfg.auditPostgres, sqlstore.Config{Table: cfg.auditTable})
		if err != nil {
			hint := fmt.Sprintf("fix -audit-postgres or $%s", PostgresEnv)
			if tableProblem(err) {
				hint = "fix -audit-table, or use another database"
			}
			return nil, "", fmt.Errorf("cannot open the PostgreSQL audit store: %s (%s)", once(err.Error()), hint)
		}
		return s, "PostgreSQL", nil
	}
	s, err := sqlstore.OpenSQLite(ctx, cfg.auditDB, sqlstore.Config{Table: cfg.auditTable})
	if err != nil {
		hint := "pass -audit-db with a writable file path"
		switch {
		case tableProblem(err):
			hint = "fix -audit-table, or pass -audit-db with another file"
		case strings.Contains(err.Error(), "does not exist"):
			hint = "create the directory, or pass -audit-db with a file path in one that exists"
		}
		return nil, "", fmt.Errorf("cannot open the audit database %q: %v (%s)", cfg.auditDB, err, hint)
	}
	return s, "SQLite " + cfg.auditDB, nil
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
