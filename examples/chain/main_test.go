package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// want is the whole output of a run. Every line is the same on every run
// but the rate limiter's hint, which is the 30 s until the bucket has a
// token again less the time since the first search took one, rounded up
// to the second: 30s, or less on a machine that stalls a second or more
// between two in-memory calls; the test reads it as 30s.
const want = `search {"query":"xxxxxxxxxxxxxxxxxxxxxxxxxxx...
   audit row: tool=search outcome=rejected code=invalid_arguments message="the arguments are larger than the server allows"
   client got: isError "the arguments are larger than the server allows" {"code":"invalid_arguments","detail":{"got_bytes":112,"max_bytes":64}}
search {"query":"gophers"}
   audit row: tool=search outcome=ok code= message="" cache=miss
   client got: ok {"hits":["gophers (1)","gophers (2)"]}
search {"query":"gophers"}
   audit row: tool=search outcome=ok code= message="" cache=hit
   client got: ok {"hits":["gophers (1)","gophers (2)"]}
search {"query":"badgers"}
   audit row: tool=search outcome=rejected code=rate_limited message="too many calls: retry after 30s"
   client got: isError "too many calls: retry after 30s" {"code":"rate_limited","detail":{"retry_after_ms":30000}}
purge {}
   audit row: tool=purge outcome=rejected code=unauthenticated message="calling \"purge\" needs an authenticated caller"
   client got: isError "calling \"purge\" needs an authenticated caller" {"code":"unauthenticated"}
logs {}
   audit row: tool=logs outcome=ok code= message="" scrubbed=bearer_token truncated_from_bytes=2563
   client got: ok "retrying with Authorization: Bearer [redacted:be ... er: the result was 2563 bytes, over its limit]"
fetch {}
   audit row: tool=fetch outcome=ok code= message="" attempts=2
   client got: ok "fetched"
export {"rows":1000}
   audit row: tool=export outcome=ok code= message=""
   client got: ok {"exported":1000}
export {"rows":5000000}
   audit row: tool=export outcome=timeout code=timeout message="the tool call timed out after 1s"
   client got: isError "the tool call timed out after 1s" {"code":"timeout"}
`

// hint is the rate limiter's hint, in the message and in the detail.
var hint = regexp.MustCompile(`retry after (\d+)s|"retry_after_ms":(\d+)`)

// TestRun compares the whole output of one run. The export's Timeout is
// the real clock's, but nothing in the run races it: the small export
// returns without waiting, the bulk one waits until the Timeout ends it.
func TestRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	got := out.String()
	var hints []string
	got = hint.ReplaceAllStringFunc(got, func(h string) string {
		m := hint.FindStringSubmatch(h)
		if m[1] != "" {
			s, _ := strconv.Atoi(m[1])
			hints = append(hints, m[1]+"s")
			if s < 1 || s > 30 {
				return h // compared as is: wrong
			}
			return "retry after 30s"
		}
		ms, _ := strconv.Atoi(m[2])
		hints = append(hints, m[2]+"ms")
		if ms < 1000 || ms > 30000 || ms%1000 != 0 {
			return h
		}
		return `"retry_after_ms":30000`
	})
	require.Len(t, hints, 3, "the hint in the row's message, the client's text and its detail: %v", hints)
	assert.Equal(t, hints[0], hints[1], "the client's text says what the row says")
	assert.Equal(t, strings.TrimSuffix(hints[1], "s")+"000ms", hints[2], "the detail says it in milliseconds")
	assert.Equal(t, want, got, "the run's output, line for line")
	assert.NotContains(t, got, "eyJhbGciOiJIUzI1NiJ9", "the bearer token never reaches the client or the row")
	assert.NotContains(t, got, "diagnostics:", "no unexpected failure in this run")
}
