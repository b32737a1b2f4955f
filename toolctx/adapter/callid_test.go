package adapter_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

func TestNewCallIDUniqueConcurrent(t *testing.T) {
	const workers, per = 8, 2000
	ids := make(chan string, workers*per)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				ids <- adapter.NewCallID()
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := make(map[string]bool, workers*per)
	for id := range ids {
		require.NotEmpty(t, id, "call id is set")
		require.False(t, seen[id], "call id %q is unique", id)
		seen[id] = true
	}
	assert.Len(t, seen, workers*per, "every id was distinct")
}
