package sqlstore

// SetSQLiteChunk lets tests and benchmarks try other statement sizes; it
// returns the previous size.
func SetSQLiteChunk(n int) int {
	old := sqliteChunk
	sqliteChunk = n
	return old
}
