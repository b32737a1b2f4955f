package redisstore

import (
	"context"
	"crypto/rand"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
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

// TestNewChecksTheClient: a client that ignores context deadlines (which
// would hold a call for its read timeout) is refused at construction, as
// is a nil one; a nil option is skipped, and a Store from New leaves its
// client open.
func TestNewChecksTheClient(t *testing.T) {
	_, err := New(nil)
	require.ErrorContains(t, err, "the client is nil")
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	_, err = New(c)
	require.ErrorContains(t, err, "ContextTimeoutEnabled")

	ok := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	s, err := New(ok, nil, WithPrefix("p:"))
	require.NoError(t, err)
	require.Equal(t, "p:", s.prefix)
	require.NoError(t, s.Close())
	require.NoError(t, ok.Close(), "the client was still open after the Store's Close")
}
