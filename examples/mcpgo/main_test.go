package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	for _, want := range []string{
		`client got: ok {"id":1,"status":"shipped"}`,
		`client got: isError "order 42 does not exist" {"code":"not_found","detail":{"id":42}}`,
		`audit row: outcome=error code=not_found message="order 42 does not exist"`,
		`audit row: outcome=panic code=internal message="panic: order 13 is cursed"`,
		`audit row: outcome=error code=internal message="dial ` + FakeDSN,
		`client got: isError "the tool call timed out after 100ms" {"code":"timeout"}`,
		`client got: protocol error: `,
	} {
		assert.Contains(t, got, want)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "client got:") {
			assert.NotContains(t, line, "hunter2")
			assert.NotContains(t, line, "cursed")
		}
	}
	assert.Equal(t, 2, strings.Count(got, `isError "internal error: the tool failed; the cause was recorded on the server" {"code":"internal"}`))
}
