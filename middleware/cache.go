package middleware

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/toolmw/toolmw/toolctx"
)

// NoteCache is the note [Cache] writes on the result of every call it
// looked up: "hit" (answered from the cache) or "miss" (the handler ran).
const NoteCache = "cache"

// DefaultCacheMaxItemBytes is the largest result [Cache] keeps by default.
const DefaultCacheMaxItemBytes = 1 << 20

// CacheConfig configures [Cache].
type CacheConfig struct {
	// TTL is how long a result is served from the cache. Required.
	TTL time.Duration
	// MaxEntries bounds how many results are kept; the least recently
	// used goes first. Default 1,000.
	MaxEntries int
	// ShareAcrossSubjects lets callers with different identities share
	// entries. By default an entry is served only to the identity it was
	// made for, its subject and its set of scopes (and, for calls without
	// an identity, to the session it was made in; on a transport without
	// session ids, such as stateless HTTP or stdio, to every anonymous
	// caller): a result may hold what only its caller may see. A tool
	// whose result depends on more than the identity (a header, a cookie)
	// must not be cached. Set it only for tools whose results are public
	// data.
	ShareAcrossSubjects bool
	// MaxItemBytes is the largest result kept, in the bytes of its content
	// and structured content as they go on the wire (as [MaxResultBytes]
	// counts them); a larger one is answered and not kept. Default
	// [DefaultCacheMaxItemBytes] (1 MiB).
	MaxItemBytes int
	// Store keeps the results outside the process, shared by every
	// replica that uses it (middleware/redisstore), encoded, for TTL;
	// MaxEntries then bounds only the in-process fallback. Nil: in the
	// process.
	Store CacheStore
	// StorePolicy says how the cache uses Store: its Name, how long it
	// waits for each get and set and whether it fails open (the default:
	// the in-process cache answers while the store fails) or closed.
	// Ignored without a Store.
	StorePolicy StorePolicy
}

// Cache answers a call from a recent successful result of the same tool
// with the same arguments for the same caller, without running the
// handler. It is opt-in per tool, with [When]: use it only for read-only,
// idempotent tools (those annotated readOnlyHint and idempotentHint), whose
// result the caller may see again for TTL.
//
// The key is the tool, the arguments in canonical form (decoded and
// encoded again: key order and spacing do not matter) and the caller's
// partition (see CacheConfig.ShareAcrossSubjects). Failures are never cached, nor are calls whose arguments are
// not valid JSON, nor input-required results or any round of a
// multi-round-trip call after the first (a request with
// [toolctx.Request.RequestState] or InputResponses), which is neither
// answered from the cache nor stored in it; nor is a result larger than
// MaxItemBytes. A result served from the cache carries the note "cache" =
// "hit", and one the handler made after a lookup "cache" = "miss", so the
// audit row says which. Concurrent misses of one key may each run the
// handler; the last result is kept.
//
// With a Store, results are encoded (content, structured content, _meta;
// not the notes) and kept there; a lookup and a store are one round trip
// each, bounded by the StorePolicy's Timeout. The store's key is a hash of
// the tool, the caller's partition and the arguments, under the
// StorePolicy's Name: the store never sees an argument or a subject.
//
// Place it inside the guards (a rejected call must not be answered from
// the cache) and outside what makes the result (Retry, ScrubSecrets), so
// that what is cached is what was sent. A non-positive TTL or negative
// MaxEntries or MaxItemBytes panics, at construction.
func Cache(cfg CacheConfig) toolctx.Middleware {
	c := newResultCache(cfg)
	if c.store != nil {
		return c.onStore
	}
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			key, ok := c.lookup(req)
			if !ok {
				return next.CallTool(ctx, req)
			}
			return c.local(ctx, req, key, next)
		})
	}
}

// lookup returns the key of req, and false when req is not looked up: a
// later round of a multi-round-trip call, whose answer depends on the
// client's input and must never be stored under the key of the call's first
// round (a confirmation would be skipped the next time), or arguments that
// are not JSON.
func (c *resultCache) lookup(req *toolctx.Request) (cacheKey, bool) {
	if req.RequestState != "" || req.InputResponses != nil {
		return cacheKey{}, false
	}
	return c.key(req)
}

// local answers req from the in-process cache, or runs next and keeps its
// result.
func (c *resultCache) local(ctx context.Context, req *toolctx.Request, key cacheKey, next toolctx.Handler) *toolctx.CallResult {
	if res := c.get(key); res != nil {
		return res.WithNote(NoteCache, "hit")
	}
	res := next.CallTool(ctx, req)
	if c.keeps(ctx, res) {
		c.put(key, res)
	}
	return res.WithNote(NoteCache, "miss")
}

// onStore is the cache on its store, with the in-process cache as the
// fallback.
func (c *resultCache) onStore(next toolctx.Handler) toolctx.Handler {
	return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
		key, ok := c.lookup(req)
		if !ok {
			return next.CallTool(ctx, req)
		}
		skey := c.sg.ns + hex.EncodeToString(key[:])
		sctx, cancel := c.sg.ctx(ctx)
		b, found, err := c.store.Get(sctx, skey)
		cancel()
		if err != nil {
			if ctx.Err() != nil { // the call ended while the store was asked
				return toolctx.ErrorResult(ctx.Err())
			}
			if res := c.sg.failed(ctx, req, err); res != nil {
				return res
			}
			return c.sg.noted(c.local(ctx, req, key, next), err)
		}
		c.sg.answered(ctx, req)
		if found {
			if res, err := decodeResult(b); err == nil {
				return res.WithNote(NoteCache, "hit")
			}
			// Not a value this version wrote: a miss, overwritten below.
		}
		res := next.CallTool(ctx, req)
		if !c.keeps(ctx, res) {
			return res.WithNote(NoteCache, "miss")
		}
		enc, err := encodeResult(res)
		if err != nil { // content the codec cannot carry: not kept
			return res.WithNote(NoteCache, "miss")
		}
		sctx, cancel = c.sg.ctx(ctx)
		err = c.store.Set(sctx, skey, enc, c.ttl)
		cancel()
		if err != nil {
			// The result is made: whatever the policy, it is answered,
			// and kept in the process instead.
			c.sg.report(ctx, req, "", err)
			c.put(key, res)
			return c.sg.noted(res.WithNote(NoteCache, "miss"), err)
		}
		c.sg.answered(ctx, req)
		return res.WithNote(NoteCache, "miss")
	})
}

// keeps reports whether res may be cached: a success, not input-required,
// made before the call's context ended, at most MaxItemBytes.
func (c *resultCache) keeps(ctx context.Context, res *toolctx.CallResult) bool {
	if res.Failed() || res.InputRequired != nil || ctx.Err() != nil {
		return false
	}
	n, ok := structuredSize(res.StructuredContent)
	return ok && n+contentSize(res.Content) <= c.maxItem
}

type cacheKey [sha256.Size]byte

type cacheEntry struct {
	key     cacheKey
	res     *toolctx.CallResult
	expires time.Time
}

// resultCache is an LRU of results with a TTL.
type resultCache struct {
	ttl     time.Duration
	max     int
	maxItem int
	shared  bool

	store CacheStore // nil: the LRU below alone
	sg    storeGuard

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
	case cfg.MaxItemBytes < 0:
		panic(fmt.Sprintf("middleware.Cache: MaxItemBytes must not be negative, got %d", cfg.MaxItemBytes))
	}
	maxEntries := cfg.MaxEntries
	if maxEntries == 0 {
		maxEntries = 1000
	}
	maxItem := cfg.MaxItemBytes
	if maxItem == 0 {
		maxItem = DefaultCacheMaxItemBytes
	}
	c := &resultCache{ttl: cfg.TTL, max: maxEntries, maxItem: maxItem, shared: cfg.ShareAcrossSubjects,
		order: list.New(), items: map[cacheKey]*list.Element{}}
	if cfg.Store != nil {
		c.store = cfg.Store
		c.sg = newStoreGuard("Cache", cfg.StorePolicy)
	}
	return c
}

// key hashes the tool, the caller and the canonical arguments; false when
// the arguments are not valid JSON.
func (c *resultCache) key(req *toolctx.Request) (cacheKey, bool) {
	var args any
	if raw := req.Arguments.JSON(); len(bytes.TrimSpace(raw)) > 0 {
		d := json.NewDecoder(bytes.NewReader(raw))
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
	id := req.Identity
	switch {
	case c.shared:
		writeField(h, "*")
	case id != nil && (id.Subject != "" || len(id.Scopes) > 0):
		// The whole identity: a result made for alice holding "admin"
		// is not alice's holding "read" (RequireScopes and the tool
		// decide on scopes). Each field is length-prefixed and the
		// scopes counted, so "a|b" and "a" holding "b" stay apart; the
		// scopes are a set, so their order does not matter.
		writeField(h, "identity")
		writeField(h, id.Subject)
		scopes := slices.Compact(slices.Sorted(slices.Values(id.Scopes)))
		writeField(h, strconv.Itoa(len(scopes)))
		for _, s := range scopes {
			writeField(h, s)
		}
	default:
		// Anonymous: the session, when the transport has one; without
		// (stateless HTTP, stdio), every anonymous caller is one
		// partition: what the server answers one without an identity it
		// answers any.
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
