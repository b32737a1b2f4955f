package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
)

// callIDCandidate is one way to find a PostgreSQL row by call id: the index
// it creates (on a table made by OpenPostgres, whose own call_id index is
// dropped and whose collations are set back to the default first), the
// WHERE clause a lookup uses, and whether batches go through an unlogged
// staging table.
type callIDCandidate struct {
	name    string
	index   string // "%s" is the table
	lookup  string // "%s" is the table, $1 the call id
	staging bool
	// summarize: the writer summarizes the new BRIN ranges after each batch.
	summarize bool
}

// brinBloom is a BRIN bloom index on call_id: a bloom filter per 32 pages
// (some 1,300 rows of 200 bytes), which costs the writer nothing per row.
const brinBloom = `CREATE INDEX ON %s USING brin (call_id text_bloom_ops(n_distinct_per_range = 2000, false_positive_rate = 0.01))
	WITH (pages_per_range = 32, autosummarize = on)`

var callIDCandidates = []callIDCandidate{
	{name: "none", lookup: `SELECT count(*) FROM %s WHERE call_id = $1`},
	{name: "btree", index: `CREATE INDEX ON %s (call_id) WHERE call_id <> ''`,
		lookup: `SELECT count(*) FROM %s WHERE call_id = $1 AND call_id <> ''`},
	{name: "btree-C", index: `CREATE INDEX ON %s ((call_id COLLATE "C")) WHERE call_id <> ''`,
		lookup: `SELECT count(*) FROM %s WHERE call_id COLLATE "C" = $1 AND call_id <> ''`},
	{name: "column-C", index: `ALTER TABLE %s ALTER COLUMN call_id TYPE text COLLATE "C"; CREATE INDEX ON %[1]s (call_id) WHERE call_id <> ''`,
		lookup: `SELECT count(*) FROM %s WHERE call_id = $1 AND call_id <> ''`},
	{name: "column-C+tool-C", index: `ALTER TABLE %s ALTER COLUMN call_id TYPE text COLLATE "C", ALTER COLUMN tool TYPE text COLLATE "C"; CREATE INDEX ON %[1]s (call_id) WHERE call_id <> ''`,
		lookup: `SELECT count(*) FROM %s WHERE call_id = $1 AND call_id <> ''`},
	{name: "hash", index: `CREATE INDEX ON %s USING hash (call_id) WHERE call_id <> ''`,
		lookup: `SELECT count(*) FROM %s WHERE call_id = $1 AND call_id <> ''`},
	{name: "btree-hash64", index: `CREATE INDEX ON %s ((hashtextextended(call_id, 0))) WHERE call_id <> ''`,
		lookup: `SELECT count(*) FROM %s WHERE hashtextextended(call_id, 0) = hashtextextended($1, 0) AND call_id = $1 AND call_id <> ''`},
	{name: "brin-bloom", index: brinBloom,
		lookup: `SELECT count(*) FROM %s WHERE call_id = $1`},
	{name: "brin-bloom+sum", index: brinBloom, summarize: true,
		lookup: `SELECT count(*) FROM %s WHERE call_id = $1`},
	{name: "staging+btree", index: `CREATE INDEX ON %s (call_id) WHERE call_id <> ''`, staging: true,
		lookup: `SELECT count(*) FROM %s WHERE call_id = $1 AND call_id <> ''`},
}

// BenchmarkPostgresCallIDIndex compares, in one run, the ways to keep a
// lookup by call id indexed against what each costs the COPY ingest. Each
// op writes one 4,096-row batch (call ids as adapter.NewCallID makes them)
// into each candidate's own table, in a new random order every round, so
// that the machine's other load falls on all of them alike; it reports each
// candidate's rows/s, then each one's lookup time of the oldest call id
// (lookup-ms, the median of 21) once the tables are full.
//
//	TOOLMW_TEST_POSTGRES_DSN=... go test ./audit/sqlstore -run '^$' -bench PostgresCallIDIndex -benchtime 100x -count 3
//	TOOLMW_BENCH_CANDIDATES=none,btree,column-C+tool-C ...   # a subset
//
// Measured 2026-12-01 (2 cores shared with other work, load 7-22; the
// ratios to "none" of the same run are the figures, not the rates). Every
// exact index costs 7-45% of the ingest. In the one run with all of them
// (-count 3): btree (version 2's index) 0.81, 0.75, 0.59 of none;
// column-C (call_id collated "C") 0.77, 0.79, 0.76; column-C+tool-C
// (version 3) 0.93, 0.78, 0.83; btree-C (an expression index that queries
// must name) 0.76, 0.81, 0.70. In earlier runs: btree 0.59-0.73, btree-C
// 0.71-0.79, hash 0.61-0.71, btree-hash64 0.61, staging+btree 0.55.
// Lookups of the oldest call: 0.02-0.3 ms with any index, 60-170 ms
// without. brin-bloom costs next to nothing (0.83, 0.99 of none) but its
// ranges are summarized only by autovacuum, so a lookup scans the
// unsummarized tail (128 ms, as without an index, after a 10 s run);
// summarizing the full ranges from the writer after each batch
// (brin-bloom+sum) made it cost as much as a btree (0.73, 0.76).
func BenchmarkPostgresCallIDIndex(b *testing.B) {
	dsn := os.Getenv("TOOLMW_TEST_POSTGRES_DSN")
	if dsn == "" {
		b.Skip("TOOLMW_TEST_POSTGRES_DSN is not set")
	}
	only := os.Getenv("TOOLMW_BENCH_CANDIDATES") // a comma-separated subset, for a quicker run
	ctx := context.Background()
	var cands []callIDCandidate
	var stores []*Store
	for _, c := range callIDCandidates {
		if only != "" && !slices.Contains(strings.Split(only, ","), c.name) {
			continue
		}
		table := fmt.Sprintf("bench_callid_%d_%d", time.Now().UnixNano(), rand.IntN(1_000_000))
		s, err := OpenPostgres(ctx, dsn, Config{Table: table})
		require.NoError(b, err, "open %s", c.name)
		b.Cleanup(func() {
			_, _ = s.pool.Exec(ctx, "DROP TABLE IF EXISTS "+table+", "+table+"_schema, "+table+"_batches")
			_ = s.Close()
		})
		// Back to version 2's layout: no call_id index, the default collation.
		_, err = s.pool.Exec(ctx, "DROP INDEX IF EXISTS "+table+"_call_id; ALTER TABLE "+table+
			` ALTER COLUMN call_id TYPE text COLLATE "default", ALTER COLUMN tool TYPE text COLLATE "default"`)
		require.NoError(b, err, "drop the store's own index")
		if c.index != "" {
			_, err = s.pool.Exec(ctx, strings.Replace(fmt.Sprintf(c.index, table), "INDEX ON", "INDEX "+table+"_call_id ON", 1))
			require.NoError(b, err, "index %s", c.name)
		}
		cands = append(cands, c)
		stores = append(stores, s)
	}
	const batchRows = 4096
	batch := make([]audit.Record, batchRows)
	prefix := fmt.Sprintf("%012x-", rand.Uint64()>>16)
	var firstID string
	next := 0
	fill := func(t time.Time) {
		for i := range batch {
			next++
			batch[i] = audit.Record{Time: t.Add(time.Duration(i) * time.Microsecond), Kind: audit.KindTool,
				CallID: prefix + strconv.Itoa(next), SessionID: "session-1", Transport: "streamable-http",
				Tool: "search", Subject: "alice", Outcome: audit.OutcomeOK, Duration: 1234 * time.Microsecond}
			if next%10 == 0 {
				batch[i].Outcome, batch[i].Code, batch[i].Message = audit.OutcomeError, errs.CodeInternal, "dial tcp 10.0.0.1:5432: connection refused"
			}
		}
	}
	write := func(c callIDCandidate, s *Store) {
		var err error
		if c.staging {
			err = s.writeStaged(ctx, batch)
		} else {
			err = s.WriteBatch(ctx, batch)
		}
		if err == nil && c.summarize {
			// Summarize the ranges that are full (32 pages) and not
			// summarized yet; the last, partly filled one is left alone.
			_, err = s.pool.Exec(ctx, `SELECT brin_summarize_range(i.indexrelid, r * 32)
				FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid,
				generate_series(GREATEST(0, pg_relation_size(i.indrelid) / 8192 / 32 - 4), pg_relation_size(i.indrelid) / 8192 / 32 - 1) AS r
				WHERE i.indrelid = to_regclass($1) AND c.relname LIKE '%call_id%'`, s.table)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	// A warm-up batch each, outside the timing.
	fill(time.Now().Add(-48 * time.Hour))
	firstID = batch[0].CallID
	for i, c := range cands {
		write(c, stores[i])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	total := make([]time.Duration, len(cands))
	base := time.Now().Add(-47 * time.Hour)
	b.ResetTimer()
	round := 0
	for b.Loop() {
		round++
		fill(base.Add(time.Duration(round) * time.Second))
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			t0 := time.Now()
			write(cands[i], stores[i])
			total[i] += time.Since(t0)
		}
	}
	b.StopTimer()
	for i, c := range cands {
		b.ReportMetric(float64(round*batchRows)/total[i].Seconds(), c.name+"-rows/s")
	}
	lastID := batch[len(batch)-1].CallID
	lookup := func(s *Store, q, id string) time.Duration {
		var times []time.Duration
		for range 21 {
			var n int64
			t0 := time.Now()
			require.NoError(b, s.pool.QueryRow(ctx, q, id).Scan(&n), q)
			times = append(times, time.Since(t0))
			require.Equal(b, int64(1), n, "%s finds the call", q)
		}
		slices.Sort(times)
		return times[len(times)/2]
	}
	for i, c := range cands {
		_, err := stores[i].pool.Exec(ctx, "ANALYZE "+stores[i].table)
		require.NoError(b, err)
		q := fmt.Sprintf(c.lookup, stores[i].table)
		b.ReportMetric(float64(lookup(stores[i], q, firstID).Microseconds())/1000, c.name+"-lookup-ms")
		b.ReportMetric(float64(lookup(stores[i], q, lastID).Microseconds())/1000, c.name+"-lookup-newest-ms")
		var size int64
		require.NoError(b, stores[i].pool.QueryRow(ctx,
			"SELECT COALESCE(SUM(pg_relation_size(indexrelid)), 0) FROM pg_index WHERE indrelid = to_regclass($1)", stores[i].table).Scan(&size))
		b.ReportMetric(float64(size)/(1<<20), c.name+"-index-MB")
	}
}

// writeStaged writes batch with COPY into a temporary (unlogged) staging
// table, then moves it into the table with one INSERT ... SELECT: the
// staging candidate of BenchmarkPostgresCallIDIndex.
func (s *Store) writeStaged(ctx context.Context, batch []audit.Record) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	stage := s.table + "_stage"
	cols := strings.Join(columns, ", ")
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS "+stage+" ON COMMIT DELETE ROWS AS SELECT "+cols+" FROM "+s.table+" WITH NO DATA"); err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{stage}, columns, &pgRows{batch: batch, vals: make([]any, 0, len(columns))}); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+s.table+" ("+cols+") SELECT "+cols+" FROM "+stage); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
