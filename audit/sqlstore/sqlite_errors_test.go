package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadOnlyClassifiesByCode: the classification reads the result code
// of the *sqlite.Error, not its text: a real read-only error is named, and
// a plain error whose text says "readonly" or "full" is left alone.
func TestReadOnlyClassifiesByCode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE t (x INTEGER)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer ro.Close()
	_, err = ro.ExecContext(context.Background(), `INSERT INTO t VALUES (1)`)
	require.Error(t, err, "a write to a read-only database fails")
	got := readOnly(fmt.Errorf("insert: %w", err))
	assert.Contains(t, got.Error(), "the database is read-only", "SQLITE_READONLY, through a wrap, is named")
	assert.ErrorIs(t, got, err, "the cause is kept")

	for _, text := range []string{"attempt to write a readonly database", "database or disk is full"} {
		plain := errors.New(text)
		assert.Same(t, plain, readOnly(plain), "%q is not an SQLite error: left alone, whatever its text", text)
	}
}
