package redisstore

import (
	"context"
	"crypto/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The Store starts no goroutine of its own; go-redis's end with Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// RedisEnv names the Redis server the tests use, as redis://127.0.0.1:PORT/0;
// the tests that need one skip only when it is unset (CI sets it).
const RedisEnv = "TOOLMW_TEST_REDIS_URL"

// testStore opens a Store on the test server under a prefix of its own,
// closed with the test.
func testStore(t testing.TB) *Store {
	t.Helper()
	url := os.Getenv(RedisEnv)
	if url == "" {
		t.Skip(RedisEnv + " is not set")
	}
	s, err := Open(url, WithPrefix("toolmw-test:"+rand.Text()+":"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.rdb.Ping(context.Background()).Err(), "the test's Redis answers")
	return s
}
