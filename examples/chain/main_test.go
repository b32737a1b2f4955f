package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	for _, want := range []string{
		// MaxArgBytes: a public rejection with its detail, and a row.
		`audit row: tool=search outcome=rejected code=invalid_arguments message="the arguments are larger than the server allows"`,
		`client got: isError "the arguments are larger than the server allows" {"code":"invalid_arguments","detail":{"got_bytes":112,"max_bytes":64}}`,
		`client got: ok {"hits":["gophers (1)","gophers (2)"]}`,
		// Cache: the repeat is a hit, and the row says so.
		`audit row: tool=search outcome=ok code= message="" cache=hit`,
		// RateLimit, on search only.
		`audit row: tool=search outcome=rejected code=rate_limited message="too many calls: retry after `,
		// RequireScopes: no identity in memory.
		`client got: isError "calling \"purge\" needs an authenticated caller" {"code":"unauthenticated"}`,
		// ScrubSecrets and MaxResultBytes on logs: the row has both notes.
		`audit row: tool=logs outcome=ok code= message="" scrubbed=bearer_token truncated_from_bytes=2563`,
		`client got: ok "retrying with Authorization: Bearer [redacted:be ... er: the result was 2563 bytes, over its limit]"`,
		// Retry on fetch.
		`audit row: tool=fetch outcome=ok code= message="" attempts=2`,
		`client got: ok "fetched"`,
		// Timeout, on export only.
		`client got: ok {"exported":1000}`,
		`client got: isError "the tool call timed out after 100ms" {"code":"timeout"}`,
		`audit row: tool=export outcome=timeout code=timeout`,
	} {
		assert.Contains(t, got, want, "the run's output")
	}
	assert.Regexp(t, `client got: isError "too many calls: retry after [0-9.]+s" \{"code":"rate_limited","detail":\{"retry_after_ms":[0-9]+\}\}`, got, "the rate limiter's rejection")
	assert.NotContains(t, got, "eyJhbGciOiJIUzI1NiJ9", "the bearer token never reaches the client or the row")
	assert.NotContains(t, got, "diagnostics:", "no unexpected failure in this run")
}
