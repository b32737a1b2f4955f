package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	for _, want := range []string{
		// The argument-size guard: a public rejection with its detail, and a row.
		`audit row: tool=search outcome=rejected code=invalid_arguments message="the arguments are too large"`,
		`client got: isError "the arguments are too large" {"code":"invalid_arguments","detail":{"got_bytes":112,"max_bytes":64}}`,
		`client got: ok {"hits":["gophers (1)","gophers (2)"]}`,
		`client got: ok {"hits":["otters (1)","otters (2)"]}`,
		// The rate limiter, on search only.
		`client got: isError "too many calls to search; try again later" {"code":"rate_limited","detail":{"limit":2,"window":"1m0s"}}`,
		`audit row: tool=search outcome=rejected code=rate_limited`,
		// The timeout, on export only.
		`client got: ok {"exported":1000}`,
		`client got: isError "the tool call timed out after 100ms" {"code":"timeout"}`,
		`audit row: tool=export outcome=timeout code=timeout`,
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "diagnostics:", "no unexpected failure in this run")
}
