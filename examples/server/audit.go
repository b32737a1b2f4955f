package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
)

// This file is the demo's whole audit wiring: the store (-audit-db,
// -audit-postgres, -audit-table), the local spool that absorbs its outages
// (-audit-spool), the asynchronous writer in front of them, and their
// shutdown. Everything else takes the audit.Emitter.

// auditLog is the open audit store and the writer in front of it.
type auditLog struct {
	store  *sqlstore.Store
	w      *audit.Async
	where  string // for the banner: "SQLite path" or "PostgreSQL"
	logger *slog.Logger
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
	spool, err := audit.OpenSpool(spoolDir, audit.SpoolOptions{FallbackLogger: logger})
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("%v (pass -audit-spool with a writable directory)", err)
	}
	// The recommended configuration: a call never waits on the store; an
	// outage is absorbed by the spool and replayed once the store is back.
	w := audit.NewAsync(store, audit.AsyncOptions{Spool: spool, FallbackLogger: logger}) // logs its Stats on Close
	return &auditLog{store: store, w: w, where: where, logger: logger}, nil
}

// Close flushes the writer's queue into the store, then closes the store.
func (a *auditLog) Close() {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
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
		s, err := sqlstore.OpenPostgres(octx, cfg.auditPostgres, sqlstore.Options{Table: cfg.auditTable})
		if err != nil {
			return nil, "", fmt.Errorf("cannot open the PostgreSQL audit store: %v (fix -audit-postgres or $%s, or -audit-table)", err, PostgresEnv)
		}
		return s, "PostgreSQL", nil
	}
	s, err := sqlstore.OpenSQLite(ctx, cfg.auditDB, sqlstore.Options{Table: cfg.auditTable})
	if err != nil {
		return nil, "", fmt.Errorf("cannot open the audit database %q: %v (pass -audit-db with a writable file path, or fix -audit-table)", cfg.auditDB, err)
	}
	return s, "SQLite " + cfg.auditDB, nil
}
