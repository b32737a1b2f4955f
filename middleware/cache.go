package middleware

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/toolmw/toolmw/toolctx"
)

// NoteCache is the note [Cache] writes on a result it answered from the
// cache: "hit".
const NoteCache = "cache"

// CacheConfig configures [Cache].
type CacheConfig struct {
	// TTL is how long a result is served from the cache. Required.
	TTL time.Duration
	// MaxEntries bounds how many results are kept; the least recently
	// used goes first. Default 1,000.
	MaxEntries int
	// ShareAcrossSubjects lets callers with different identities share
	// entries. By default an entry is served only to the subject it was
	// made for (and, for calls without an identity, to the session it was
	// made in): a result may hold what only its caller may see.
	ShareAcrossSubjects bool
}

// Cache answers a call from a recent successful result of the same tool
// with the same arguments for the same caller, without running the
// handler. It is opt-in per tool, with [When]: use it only for read-only,
// idempotent tools (those annotated readOnlyHint and idempotentHint), whose
// result the caller may see again for TTL.
//
// The key is the tool, the arguments in canonical form (decoded and
// encoded again: key order and spacing do not matter) and the caller's
// subject. Failures are never cached, nor are calls whose arguments are
// not valid JSON, nor input-required results or any round of a
// multi-round-trip call after the first (a request with
// [toolctx.Request.RequestState] or InputResponses), which is neither
// answered from the cache nor stored in it. A result served from the cache carries the note "cache"
// = "hit", so its audit row says so. Concurrent misses of one key may each
// run the handler; the last result is kept.
//
// Place it inside the guards (a rejected call must not be answered from
// the cache) and outside what makes the result (Retry, ScrubSecrets), so
// that what is cached is what was sent. A non-positive TTL or negative
// MaxEntries panics, at construction.
func Cache(cfg CacheConfig) toolctx.Middleware {
	c := newResultCache(cfg)
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			if req.RequestState != "" || req.InputResponses != nil {
				// A later round of a multi-round-trip call: its answer
				// depends on the client's input, and must never be
				// stored under the key of the call's first round (a
				// confirmation would be skipped the next time).
				return next.CallTool(ctx, req)
			}
			key, ok := c.key(req)
			if !ok {
				return next.CallTool(ctx, req)
			}
			if res := c.get(key); res != nil {
				return res.WithNote(NoteCache, "hit")
			}
			res := next.CallTool(ctx, req)
			if !res.Failed() && res.InputRequired == nil && ctx.Err() == nil {
				c.put(key, res)
			}
			return res
		})
	}
}

type cacheKey [sha256.Size]byte

type cacheEntry struct {
	key     cacheKey
	res     *toolctx.CallResult
	expires time.Time
}

// resultCache is an LRU of results with a TTL.
type resultCache struct {
	ttl    time.Duration
	max    int
	shared bool

	mu    sync.Mutex
	order *list.List // of *cacheEntry, most recent first
	items map[cacheKey]*list.Element
}

func newResultCache(cfg CacheConfig) *resultCache {
	switch {
	case cfg.TTL <= 0:
		panic(fmt.Sprintf("middleware.Cache: TTL must be positive, got %v", cfg.TTL))
	case cfg.MaxEntries < 0:
		panic(fmt.Sprintf("middleware.Cache: MaxEntries must not be negative, got %d", cfg.MaxEntries))
	}
	maxEntries := cfg.MaxEntries
	if maxEntries == 0 {
		maxEntries = 1000
	}
	return &resultCache{ttl: cfg.TTL, max: maxEntries, shared: cfg.ShareAcrossSubjects, order: list.New(), items: map[cacheKey]*list.Element{}}
}

// key hashes the tool, the caller and the canonical arguments; false when
// the arguments are not valid JSON.
func (c *resultCache) key(req *toolctx.Request) (cacheKey, bool) {
	var args any
	if len(bytes.TrimSpace(req.Arguments)) > 0 {
		d := json.NewDecoder(bytes.NewReader(req.Arguments))
		d.UseNumber() // 1.0 and 1 stay distinct, large integers exact
		if d.Decode(&args) != nil || d.More() {
			return cacheKey{}, false
		}
	}
	canon, err := json.Marshal(args) // map keys sorted
	if err != nil {
		return cacheKey{}, false
	}
	h := sha256.New()
	writeField(h, req.Tool)
	switch {
	case c.shared:
		writeField(h, "*")
	case req.Identity != nil && req.Identity.Subject != "":
		writeField(h, "subject")
		writeField(h, req.Identity.Subject)
	default:
		writeField(h, "session")
		writeField(h, req.SessionID)
	}
	h.Write(canon)
	var k cacheKey
	h.Sum(k[:0])
	return k, true
}

// writeField writes s with its length, so that fields cannot run into
// each other.
func writeField(h interface{ Write([]byte) (int, error) }, s string) {
	var n [8]byte
	for i, l := 0, len(s); i < 8; i, l = i+1, l>>8 {
		n[i] = byte(l)
	}
	h.Write(n[:])
	h.Write([]byte(s))
}

func (c *resultCache) get(k cacheKey) *toolctx.CallResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return nil
	}
	e := el.Value.(*cacheEntry)
	if time.Now().After(e.expires) {
		c.order.Remove(el)
		delete(c.items, k)
		return nil
	}
	c.order.MoveToFront(el)
	return e.res
}

func (c *resultCache) put(k cacheKey, res *toolctx.CallResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		e := el.Value.(*cacheEntry)
		e.res, e.expires = res, time.Now().Add(c.ttl)
		c.order.MoveToFront(el)
		return
	}
	c.items[k] = c.order.PushFront(&cacheEntry{key: k, res: res, expires: time.Now().Add(c.ttl)})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}
