package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/audit/sqlstore"
	"github.com/toolmw/toolmw/errs"
)

// PostgresEnv may hold the PostgreSQL DSN instead of -postgres.
const PostgresEnv = "TOOLMW_AUDIT_POSTGRES"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, time.Now))
}

type options struct {
	db, postgres, table string
	q                   sqlstore.Query
	json                bool
}

func fail(stderr io.Writer, code int, format string, args ...any) int {
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	fmt.Fprintln(stderr, "audit: "+msg)
	return code
}

func parse(args []string, stderr io.Writer, now time.Time) (options, error) {
	var o options
	var tool, outcome, code, since, kind string
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.db, "db", "toolmw-audit.db", "SQLite audit database `path`")
	fs.StringVar(&o.postgres, "postgres", "", "PostgreSQL `DSN` (instead of -db; also $"+PostgresEnv+")")
	fs.StringVar(&o.table, "table", "", "audit table (default "+sqlstore.DefaultTable+")")
	fs.StringVar(&tool, "tool", "", "only this tool's rows")
	fs.StringVar(&outcome, "outcome", "", "only this outcome: "+joinOutcomes())
	fs.StringVar(&code, "code", "", "only this error code (internal, not_found, timeout, ...)")
	fs.StringVar(&since, "since", "", "only rows since a `time`: a duration back from now (15m, 2h) or RFC 3339")
	fs.StringVar(&kind, "kind", "tool", "tool rows, http rows, or all")
	fs.IntVar(&o.q.Limit, "limit", 50, "at most this many rows (newest first)")
	fs.BoolVar(&o.json, "json", false, "print the rows as a JSON array")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: go run ./examples/audit [flags]")
			fs.PrintDefaults()
			return o, err
		}
		return o, fmt.Errorf("%v (run with -h to list the flags)", err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (run with -h to list the flags)", fs.Arg(0))
	}
	if o.postgres == "" {
		o.postgres = os.Getenv(PostgresEnv)
	}
	o.q.Tool = tool
	if outcome != "" {
		o.q.Outcome = audit.RowOutcome(outcome)
		if !o.q.Outcome.Valid() {
			return o, fmt.Errorf("-outcome %q is not one of %s", outcome, joinOutcomes())
		}
	}
	if code != "" {
		o.q.Code = errs.Code(code)
		if !o.q.Code.Valid() {
			return o, fmt.Errorf("-code %q is not a toolmw error code", code)
		}
	}
	switch kind {
	case "tool":
		o.q.Kind = audit.KindTool
	case "http":
		o.q.Kind = audit.KindHTTP
	case "all", "":
	default:
		return o, fmt.Errorf("-kind must be tool, http or all, not %q", kind)
	}
	if since != "" {
		t, err := parseSince(since, now)
		if err != nil {
			return o, err
		}
		o.q.Since = t
	}
	if o.q.Limit < 1 || o.q.Limit > sqlstore.MaxQueryLimit {
		return o, fmt.Errorf("-limit must be between 1 and %d", sqlstore.MaxQueryLimit)
	}
	return o, nil
}

func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			d = -d
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("-since %q is neither a duration (15m, 2h) nor an RFC 3339 time (2026-01-02T15:04:05Z)", s)
}

func joinOutcomes() string {
	var s []string
	for _, o := range audit.Outcomes() {
		s = append(s, string(o))
	}
	return strings.Join(s, ", ")
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	o, err := parse(args, stderr, now())
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return fail(stderr, 2, "%v", err)
	}
	store, err := open(ctx, o)
	if err != nil {
		return fail(stderr, 1, "%v", err)
	}
	defer func() { _ = store.Close() }()
	rows, err := store.Query(ctx, o.q)
	if err != nil {
		return fail(stderr, 1, "reading the audit table: %v", err)
	}
	if o.json {
		err = writeJSON(stdout, rows)
	} else {
		err = writeTable(stdout, rows)
	}
	if err != nil {
		return fail(stderr, 1, "%v", err)
	}
	return 0
}

func open(ctx context.Context, o options) (*sqlstore.Store, error) {
	opts := sqlstore.Config{Table: o.table, ReadOnly: true} // a reader never creates or changes anything
	if o.postgres != "" {
		s, err := sqlstore.OpenPostgres(ctx, o.postgres, opts)
		if err != nil {
			return nil, fmt.Errorf("cannot open the PostgreSQL audit store: %v (check -postgres or $%s)", err, PostgresEnv)
		}
		return s, nil
	}
	// A path that is not there is almost always a typo or the wrong
	// directory.
	file, _, _ := strings.Cut(o.db, "?")
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("no audit database at %q (run the demo server first, or pass -db with the server's -audit-db path)", o.db)
	}
	s, err := sqlstore.OpenSQLite(ctx, o.db, opts)
	if err != nil {
		return nil, fmt.Errorf("cannot open the audit database %q: %v", o.db, err)
	}
	return s, nil
}

// Row is one audit row as -json prints it.
type Row struct {
	Time       time.Time        `json:"time"`
	Kind       audit.Kind       `json:"kind"`
	CallID     string           `json:"call_id,omitempty"`
	RequestID  string           `json:"request_id,omitempty"`
	SessionID  string           `json:"session_id,omitempty"`
	Transport  string           `json:"transport,omitempty"`
	Tool       string           `json:"tool,omitempty"`
	Subject    string           `json:"subject,omitempty"`
	Outcome    audit.RowOutcome `json:"outcome"`
	Code       errs.Code        `json:"code,omitempty"`
	Message    string           `json:"message,omitempty"`
	Detail     map[string]any   `json:"detail,omitempty"`
	DurationMS float64          `json:"duration_ms"`
	ClientMeta map[string]any   `json:"client_meta,omitempty"`
	Arguments  json.RawMessage  `json:"arguments,omitempty"`
	Method     string           `json:"method,omitempty"`
	Path       string           `json:"path,omitempty"`
	Status     int              `json:"status,omitempty"`
	Notes      []Note           `json:"notes,omitempty"`
	TraceID    string           `json:"trace_id,omitempty"`
	SpanID     string           `json:"span_id,omitempty"`
	// RequestBytes, ResponseBytes and ContentBlocks are the call's sizes
	// (see audit.Record); 0 in rows written before schema version 4.
	RequestBytes  int `json:"request_bytes,omitempty"`
	ResponseBytes int `json:"response_bytes,omitempty"`
	ContentBlocks int `json:"content_blocks,omitempty"`
}

// Note is one of a row's notes (what an interceptor noted of the call:
// "attempts", "cache", "scrubbed", ...) as -json prints it.
type Note struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// RowOf converts a record for -json.
func RowOf(r audit.Record) Row {
	return Row{
		Time: r.Time.UTC(), Kind: r.Kind, CallID: r.CallID, RequestID: r.RequestID, SessionID: r.SessionID,
		Transport: r.Transport, Tool: r.Tool, Subject: r.Subject, Outcome: r.Outcome, Code: r.Code,
		Message: r.Message, Detail: r.Detail, DurationMS: float64(r.Duration.Microseconds()) / 1000,
		ClientMeta: r.ClientMeta, Arguments: r.Arguments, Method: r.Method, Path: r.Path, Status: r.Status,
		Notes: notesOf(r), TraceID: r.TraceID, SpanID: r.SpanID,
		RequestBytes: r.RequestBytes, ResponseBytes: r.ResponseBytes, ContentBlocks: r.ContentBlocks,
	}
}

func notesOf(r audit.Record) []Note {
	if len(r.Notes) == 0 {
		return nil
	}
	out := make([]Note, len(r.Notes))
	for i, n := range r.Notes {
		out[i] = Note(n)
	}
	return out
}

func writeJSON(w io.Writer, rows []audit.Record) error {
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		out = append(out, RowOf(r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeTable(w io.Writer, rows []audit.Record) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no rows match")
		return err
	}
	// SIZE, NOTES and TRACE are shown when a row has sizes, notes or a
	// trace id.
	var withSizes, withNotes, withTrace bool
	for _, r := range rows {
		withSizes = withSizes || r.RequestBytes != 0 || r.ResponseBytes != 0 || r.ContentBlocks != 0
		withNotes = withNotes || len(r.Notes) > 0
		withTrace = withTrace || r.TraceID != ""
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "TIME\tTOOL\tOUTCOME\tCODE\tDURATION\tCALL\t"
	if withSizes {
		header += "IN_B\tOUT_B\tBLOCKS\t"
	}
	if withTrace {
		header += "TRACE\t"
	}
	if withNotes {
		header += "NOTES\t"
	}
	fmt.Fprintln(tw, header+"MESSAGE")
	for _, r := range rows {
		what := r.Tool
		if r.Kind == audit.KindHTTP {
			what = fmt.Sprintf("%s %s %d", r.Method, r.Path, r.Status)
		}
		id := r.CallID
		if id == "" {
			id = r.RequestID
		}
		msg := r.Message
		if len(r.Detail) > 0 {
			if b, err := json.Marshal(r.Detail); err == nil {
				msg += " " + string(b)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t",
			r.Time.Local().Format("2006-01-02 15:04:05.000"), dash(what), r.Outcome, dash(string(r.Code)),
			r.Duration.Round(10*time.Microsecond), dash(id))
		if withSizes {
			fmt.Fprintf(tw, "%d\t%d\t%d\t", r.RequestBytes, r.ResponseBytes, r.ContentBlocks)
		}
		if withTrace {
			fmt.Fprintf(tw, "%s\t", dash(r.TraceID))
		}
		if withNotes {
			var notes []string
			for _, n := range r.Notes {
				notes = append(notes, n.Key+"="+n.Value)
			}
			fmt.Fprintf(tw, "%s\t", dash(oneLine(strings.Join(notes, " "))))
		}
		fmt.Fprintf(tw, "%s\n", oneLine(msg))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
