package main

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProgressReader: the progress notifications in a stream are counted
// in order, whatever the reads' sizes, on newline-delimited JSON and on
// server-sent events; other messages, and lines too long to be progress,
// are passed through unexamined; the bytes are unchanged.
func TestProgressReader(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":9,"result":{"text":"` + strings.Repeat("x", maxProgressLine) + `","m":"notifications/progress"}}`
	stream := strings.Join([]string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":1}}`,
		`event: message`,
		`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"b","progress":1}}`,
		``,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"notifications/progress"}}`,
		long,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	}, "\n") + "\n"
	var seen []string
	pr := &progressReader{r: io.NopCloser(iotest.OneByteReader(strings.NewReader(stream))), saw: func(tok string) { seen = append(seen, tok) }}
	got, err := io.ReadAll(pr)
	require.NoError(t, err)
	assert.Equal(t, stream, string(got))
	assert.Equal(t, []string{"a", "b", "7"}, seen)
}
