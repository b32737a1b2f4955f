package mcpsdk_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// canaryCall is one generated failure.
type canaryCall struct {
	id    int
	tool  string
	shape string
}

// failTools are the ways a failure reaches the adapter: a native typed
// handler, a native raw handler, a toolmw handler, a toolmw interceptor, an
// SDK middleware inside toolmw's, and a typed tool whose output fails its
// schema.
var failTools = []string{"sdk_typed_fail", "sdk_raw_fail", "tm_fail", "guard_fail", "sdkmw_fail"}

func genCalls(r *rand.Rand, n, base int) []canaryCall {
	calls := make([]canaryCall, n)
	for i := range calls {
		c := canaryCall{id: base + i}
		switch k := r.IntN(20); {
		case k == 0:
			c.tool, c.shape = "sdk_output_fail", "output"
		default:
			c.tool = failTools[r.IntN(len(failTools))]
			shapes := errShapes
			// Panics happen in handlers; interceptors and SDK middleware
			// here return errors.
			if (c.tool == "sdk_typed_fail" || c.tool == "sdk_raw_fail" || c.tool == "tm_fail") && r.IntN(2) == 0 {
				shapes = panicShapes
			}
			c.shape = shapes[r.IntN(len(shapes))]
		}
		calls[i] = c
	}
	return calls
}

// TestCanary sends at least 1,000 generated failures per transport, from
// concurrent callers, and checks that no byte the client received holds the
// canary while the server's diagnostics events and After rows of the
// scrubbed failures do.
func TestCanary(t *testing.T) {
	const (
		n       = 1000
		workers = 16
	)
	for ti, tk := range transports {
		t.Run(tk.name, func(t *testing.T) {
			t.Parallel()
			f := tk.connect(t)
			r := rand.New(rand.NewPCG(uint64(ti), 42))
			calls := genCalls(r, n, 100_000)
			ctx := context.Background()

			var wg sync.WaitGroup
			work := make(chan canaryCall)
			errc := make(chan error, n)
			for range workers {
				wg.Go(func() {
					for c := range work {
						if err := checkCanaryCall(ctx, t, f, c); err != nil {
							errc <- err
						}
					}
				})
			}
			for _, c := range calls {
				work <- c
			}
			close(work)
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Error(err)
			}

			got := f.received.bytes()
			require.Greater(t, len(got), n*50, "capture looks empty")
			require.NotContains(t, string(got), canary, "a canary reached the client")
			require.NotContains(t, string(got), "hunter2")

			recs := f.waitRecords(t, func(rs []record) bool {
				after := 0
				for _, r := range rs {
					if r.Kind == "after" && r.Case >= 100_000 {
						after++
					}
				}
				return after >= n
			})
			byCase := map[string]record{}
			for _, r := range recs {
				byCase[fmt.Sprintf("%s/%d", r.Kind, r.Case)] = r
			}
			scrubbed := 0
			for _, c := range calls {
				_, _, wantScrubbed := expectPublic(c.shape)
				a, ok := byCase[fmt.Sprintf("after/%d", c.id)]
				require.Truef(t, ok, "no After row for %+v", c)
				d, hasDiag := byCase[fmt.Sprintf("diag/%d", c.id)]
				require.Equalf(t, wantScrubbed, a.Scrubbed, "%+v: %+v", c, a)
				require.Equalf(t, wantScrubbed, hasDiag, "%+v: diagnostics called: %v", c, hasDiag)
				if !wantScrubbed {
					require.NotContainsf(t, a.Raw, canary, "%+v", c)
					continue
				}
				scrubbed++
				require.NotEmpty(t, a.Raw)
				require.NotEmpty(t, d.Raw)
				if rawHasSecret(c.shape) {
					require.Containsf(t, a.Raw, secretFor(c.id), "After row of %+v", c)
					require.Containsf(t, d.Raw, secretFor(c.id), "diagnostics of %+v", c)
				}
				if isPanic(c.shape) {
					require.Truef(t, d.Stack, "no stack for %+v", c)
					require.NotContains(t, a.Raw, "goroutine ", "a stack in an After row")
				}
			}
			require.Greater(t, scrubbed, n/2)
		})
	}
}

func checkCanaryCall(ctx context.Context, t *testing.T, f *fixture, c canaryCall) error {
	res, err := f.call(t, ctx, c.tool, failArgs{Shape: c.shape, ID: c.id}, c.id)
	if err != nil {
		return fmt.Errorf("%+v: %v", c, err)
	}
	code, msg, _ := expectPublic(c.shape)
	if !res.IsError || text(res) != msg {
		return fmt.Errorf("%+v: got isError=%v %q, want %q", c, res.IsError, text(res), msg)
	}
	em, _ := res.Meta[toolctx.ErrorMetaKey].(map[string]any)
	if em["code"] != string(code) {
		return fmt.Errorf("%+v: code %v, want %v", c, em["code"], code)
	}
	if strings.Contains(fmt.Sprint(res.Meta), canary) || code == errs.CodeInternal && len(res.Content) != 1 {
		return fmt.Errorf("%+v: unexpected result %+v", c, res)
	}
	return nil
}
