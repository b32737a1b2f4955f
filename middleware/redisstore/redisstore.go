package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware"
)

// Store is the guards' state on one Redis deployment. It implements
// [middleware.RateStore], [middleware.SemaphoreStore] and
// [middleware.CacheStore]; it is safe for concurrent use.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	owned  bool // Close closes rdb
}

var (
	_ middleware.RateStore      = (*Store)(nil)
	_ middleware.SemaphoreStore = (*Store)(nil)
	_ middleware.CacheStore     = (*Store)(nil)
)

// Option configures a [Store].
type Option func(*Store)

// DefaultPrefix is what every key of a Store starts with by default.
const DefaultPrefix = "toolmw:"

// WithPrefix sets what every key starts with (default [DefaultPrefix]): a
// namespace, for one Redis shared with other applications or by two fleets.
func WithPrefix(p string) Option {
	return func(s *Store) { s.prefix = p }
}

// New returns a Store on rdb, which the caller keeps and closes. rdb must
// honour context deadlines on its socket reads (ContextTimeoutEnabled in
// go-redis's options), or a slow Redis would hold a call for the client's
// ReadTimeout instead of the guard's StorePolicy Timeout: New returns an
// error for a *redis.Client or *redis.ClusterClient without it (other
// clients cannot be checked). Retries (MaxRetries) are best turned off: a
// guard's deadline leaves no time for them, and its fallback is the retry.
func New(rdb redis.UniversalClient, opts ...Option) (*Store, error) {
	if rdb == nil {
		return nil, errors.New("redisstore.New: the client is nil")
	}
	enabled := true
	switch c := rdb.(type) {
	case *redis.Client:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		enabled = c.Options().ContextTimeoutEnabled
	}
	if !enabled {
		return nil, errors.New("redisstore.New: the client ignores context deadlines: set ContextTimeoutEnabled in its options, or use redisstore.Open")
	}
	s := &Store{rdb: rdb, prefix: DefaultPrefix}
	for _, o := range opts {
		if o != nil { // a nil option is skipped, as everywhere in toolmw
			o(s)
		}
	}
	return s, nil
}

// Open connects to the Redis server of url (redis://[user:password@]host:port/db,
// or rediss:// for TLS; go-redis's URL parameters apply), configured for
// guards: context deadlines bound every read, no retries (of a command or
// a dial), a small pool wait.
// It does not wait for the server: a Store that cannot reach it fails its
// calls, and the guards fall back (or fail closed) until it answers. Close
// closes the connection.
func Open(url string, opts ...Option) (*Store, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redisstore.Open: %w", err)
	}
	o.ContextTimeoutEnabled = true
	o.MaxRetries = -1
	// One dial per call: go-redis's default retries a refused dial with
	// pauses of 100ms, which a guard's deadline would always cut short.
	o.DialerRetries = 1
	if o.DialTimeout == 0 || o.DialTimeout > time.Second {
		o.DialTimeout = time.Second // the guard's context bounds it further
	}
	if o.PoolTimeout == 0 {
		o.PoolTimeout = time.Second
	}
	s, err := New(redis.NewClient(o), opts...)
	if err != nil {
		return nil, err
	}
	s.owned = true
	return s, nil
}

// Close closes the client when [Open] made it; a Store from [New] leaves
// its client to the caller.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.rdb.Close()
}

// rateEpoch is the origin of the rate script's clock: 2026-01-01 UTC, in
// seconds since 1970. Microseconds since then are small enough for Lua's
// doubles to add intervals to them with an error of nanoseconds (since 1970
// it would be a quarter of a microsecond per addition).
const rateEpoch = 1767225600

// The rate limit, in microseconds since rateEpoch on the server's clock. ARGV: the
// interval, the tolerance ((burst-1) intervals), and a clock reading for
// tests ("" reads TIME; a test's clock does not run with Redis's, so its
// keys expire after an hour instead). It returns {1} when the call is admitted, {0,
// wait} when not.
var takeScript = redis.NewScript(`
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local fixed = now ~= nil
if not fixed then
  local t = redis.call('TIME')
  now = (tonumber(t[1]) - ` + strconv.Itoa(rateEpoch) + `) * 1000000 + tonumber(t[2])
end
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then
  tat = now
end
local ahead = tat - now
if ahead > tolerance then
  return {0, string.format('%.17g', ahead - tolerance)}
end
tat = tat + interval
local px = math.max(math.ceil((tat - now) / 1000), 1)
if fixed then
  px = 3600000
end
redis.call('SET', KEYS[1], string.format('%.17g', tat), 'PX', px)
return {1}
`)

// TakeToken implements [middleware.RateStore] in one round trip. The
// store counts in microseconds: an interval under one (a rate above a
// million calls a second per key) counts as one.
func (s *Store) TakeToken(ctx context.Context, key string, b middleware.RateBucket) (time.Duration, bool, error) {
	return s.take(ctx, key, b, "")
}

func (s *Store) take(ctx context.Context, key string, b middleware.RateBucket, now string) (time.Duration, bool, error) {
	interval := max(float64(b.Interval)/1e3, 1) // microseconds
	tolerance := float64(max(b.Burst, 1)-1) * interval
	v, err := takeScript.Run(ctx, s.rdb, []string{s.prefix + "rl:" + key},
		strconv.FormatFloat(interval, 'g', -1, 64), strconv.FormatFloat(tolerance, 'g', -1, 64), now).Slice()
	if err != nil {
		return 0, false, err
	}
	if len(v) == 1 {
		return 0, true, nil
	}
	if len(v) != 2 {
		return 0, false, fmt.Errorf("redisstore: the rate script answered %d values", len(v))
	}
	w, _ := v[1].(string)
	us, err := strconv.ParseFloat(w, 64)
	if err != nil || !(us >= 0) {
		return 0, false, fmt.Errorf("redisstore: the rate script answered the wait %q", w)
	}
	return time.Duration(math.Ceil(us * 1e3)), false, nil
}

// The bulkhead's acquire, in milliseconds of the server's clock. ARGV: the
// limit, the lease TTL, the lease's id. It returns 1 when the lease is
// taken, 0 when every slot is.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
`)

// The renewal of a lease: ARGV the TTL and the id. It returns 0 when the
// lease has expired (and may have been dropped).
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local at = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2]))
if at == nil or at <= now then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
`)

// ErrLeaseExpired is what renewing a lease that has expired returns.
var ErrLeaseExpired = errors.New("redisstore: the lease has expired")

// Acquire implements [middleware.SemaphoreStore] in one round trip.
func (s *Store) Acquire(ctx context.Context, key string, sem middleware.Semaphore) (middleware.SemaphoreLease, error) {
	if sem.Limit < 1 || sem.TTL < time.Millisecond {
		return nil, fmt.Errorf("redisstore: a semaphore needs a limit of at least 1 and a TTL of at least 1ms, got %d and %v", sem.Limit, sem.TTL)
	}
	l := &lease{s: s, key: s.prefix + "sem:" + key, id: rand.Text(), ttl: strconv.FormatInt(sem.TTL.Milliseconds(), 10)}
	n, err := acquireScript.Run(ctx, s.rdb, []string{l.key}, sem.Limit, l.ttl, l.id).Int()
	if err != nil || n == 0 {
		return nil, err
	}
	return l, nil
}

// lease is one slot of a semaphore: a member of its sorted set.
type lease struct {
	s   *Store
	key string
	id  string
	ttl string // milliseconds
}

func (l *lease) Renew(ctx context.Context) error {
	n, err := renewScript.Run(ctx, l.s.rdb, []string{l.key}, l.ttl, l.id).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseExpired
	}
	return nil
}

func (l *lease) Release(ctx context.Context) error {
	return l.s.rdb.ZRem(ctx, l.key, l.id).Err()
}

// Get implements [middleware.CacheStore].
func (s *Store) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := s.rdb.Get(ctx, s.prefix+"cache:"+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Set implements [middleware.CacheStore]; the key expires after ttl.
func (s *Store) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl < time.Millisecond {
		ttl = time.Millisecond
	}
	return s.rdb.Set(ctx, s.prefix+"cache:"+key, value, ttl).Err()
}
