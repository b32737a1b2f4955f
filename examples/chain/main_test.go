package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// want is the whole output of a run: every line is deterministic but the
// rate limiter's hint, which is the 30 s until the bucket has a token
// again, less the time since the first search took one, rounded up to the
// second: 30s, or 29s on a machine that stalls a second between two
// in-memory calls.
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

// fastExportTimedOut is how the run shows the 1 ms export missing its 1 s
// deadline: only a machine that starved the process for a second does
// that (seen once in 50 runs under -race at load 30 on 2 cores).
const fastExportTimedOut = "export {\"rows\":1000}\n   audit row: tool=export outcome=timeout"

// TestRun compares the whole output of a run. The run's Timeout is the
// real clock's: a run whose 1 ms export timed out is run again, three
// times at most, and the last run is compared.
func TestRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	const attempts = 3
	var got string
	for attempt := 1; ; attempt++ {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), &out))
		got = out.String()
		if !strings.Contains(got, fastExportTimedOut) || attempt == attempts {
			break
		}
		t.Logf("run %d: the 1 ms export missed its 1 s deadline (the process was starved for a second); running again", attempt)
	}
	hint := regexp.MustCompile(`retry after 29s|"retry_after_ms":29000`)
	if n := len(hint.FindAllString(got, -1)); n > 0 {
		t.Logf("the rate limiter's hint read 29s (%d places): more than a second passed between the first search and the limited one", n)
		got = strings.NewReplacer("retry after 29s", "retry after 30s", `"retry_after_ms":29000`, `"retry_after_ms":30000`).Replace(got)
	}
	assert.Equal(t, want, got, "the run's output, line for line")
	assert.NotContains(t, got, "eyJhbGciOiJIUzI1NiJ9", "the bearer token never reaches the client or the row")
	assert.NotContains(t, got, "diagnostics:", "no unexpected failure in this run")
}
