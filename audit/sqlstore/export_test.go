package sqlstore

// SetSQLiteChunk lets benchmarks try other statement sizes.
func SetSQLiteChunk(n int) { sqliteChunk = n }
