package sqlstore

import (
	"context"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SetSQLiteChunk lets tests and benchmarks try other statement sizes; it
// returns the previous size.
func SetSQLiteChunk(n int) int {
	old := sqliteChunk
	sqliteChunk = n
	return old
}

// SetSQLiteLengthLimit lowers SQLITE_LIMIT_LENGTH (the largest string or
// blob) on the store's one connection, so that a test can make SQLite
// refuse a value as too big without writing a gigabyte.
func SetSQLiteLengthLimit(ctx context.Context, s *Store, n int) error {
	s.db.SetMaxOpenConns(1)
	c, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = msqlite.Limit(c, sqlite3.SQLITE_LIMIT_LENGTH, n)
	return err
}
