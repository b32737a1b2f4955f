package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/internal/syncbuf"
)

// Writers and a reader at once (run under -race): every write lands whole.
func TestBuffer(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				n, err := b.Write([]byte("line\n"))
				assert.NoError(t, err)
				assert.Equal(t, 5, n)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, strings.Repeat("line\n", 800), b.String())
}
