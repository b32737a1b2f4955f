package middleware_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// 64 goroutines share a small cache under -race: each gets the answer to
// its own arguments, never another key's, and the handler runs at most
// once per key and eviction.
func TestCacheConcurrent(t *testing.T) {
	var calls atomic.Int32
	h := thenG(t, middleware.New(middleware.Cache(middleware.CacheConfig{TTL: time.Hour, MaxEntries: 8})), counting(&calls))
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				args := `{"k":` + strconv.Itoa((g+i)%16) + `}`
				req := reqG("t")
				req.Arguments = toolctx.RawArguments(json.RawMessage(args))
				req.Identity = &toolctx.Identity{Subject: "s" + strconv.Itoa(g%2)}
				res := h.CallTool(context.Background(), req)
				text := res.Content[0].(*toolctx.Text).Text
				assert.Contains(t, text, " "+args, "the answer to this call's own arguments")
			}
		}()
	}
	wg.Wait()
	assert.Less(t, calls.Load(), int32(64*50), "some calls were answered from the cache")
}
