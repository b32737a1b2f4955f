package mcpsdk_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

// encTools are the tools that return a success that cannot be encoded:
// handlers of every kind, with and without an output schema.
var encTools = []string{"sdk_typed_fail", "sdk_raw_fail", "tm_fail", "sdk_out_enc", "tm_out_enc"}

func genCalls(r *rand.Rand, n, base int) []canaryCall {
	calls := make([]canaryCall, n)
	for i := range calls {
		c := canaryCall{id: base + i}
		switch k := r.IntN(20); {
		case k == 0:
			c.tool, c.shape = "sdk_output_fail", "output"
		case k <= 4:
			// A success that cannot be encoded: a known shape or one
			// generated from a seed.
			c.tool = encTools[r.IntN(len(encTools))]
			if r.IntN(3) == 0 {
				c.shape = "genok:" + strconv.FormatUint(r.Uint64()>>1, 10)
			} else {
				c.shape = encShapes[r.IntN(len(encShapes))]
				if c.tool == "sdk_out_enc" && c.shape == "enc_raw" {
					// Its output is a map; the SDK encodes it.
					c.shape = "enc_chan"
				}
				if (c.tool == "sdk_typed_fail" || c.tool == "sdk_raw_fail") && r.IntN(5) == 0 {
					c.shape = sdkEncShapes[r.IntN(len(sdkEncShapes))]
				}
			}
		case k == 5 && (r.IntN(2) == 0):
			c.tool, c.shape = []string{"sdk_raw_fail", "tm_fail"}[r.IntN(2)], "nil_result"
		case k == 6:
			// A runtime.Goexit in any handler, interceptor or SDK
			// middleware.
			c.tool, c.shape = failTools[r.IntN(len(failTools))], "goexit"
		default:
			c.tool = failTools[r.IntN(len(failTools))]
			shapes := append(append([]string(nil), errShapes...), wireShapes...)
			// Panics happen in handlers; interceptors and SDK middleware
			// here return errors.
			if (c.tool == "sdk_typed_fail" || c.tool == "sdk_raw_fail" || c.tool == "tm_fail") && r.IntN(2) == 0 {
				shapes = panicShapes
			}
			c.shape = genShape(r, shapes)
		}
		calls[i] = c
	}
	return calls
}

// rawSecret reports whether the raw message of c's failure holds its
// secret, and what it is exactly when the shape says (generated errors,
// whose text may be empty).
func rawSecret(c canaryCall) (has bool, exact *string) {
	secret := secretFor(c.id)
	switch {
	case strings.HasPrefix(c.shape, "gen:"):
		n, _ := strconv.ParseUint(strings.TrimPrefix(c.shape, "gen:"), 10, 64)
		raw := genErr(n, c.tool, secret).Error()
		return strings.Contains(raw, secret), &raw
	case strings.HasPrefix(c.shape, "genok:"):
		n, _ := strconv.ParseUint(strings.TrimPrefix(c.shape, "genok:"), 10, 64)
		return genHostileResult(n, secret).secretInText, nil
	case c.shape == "goexit", c.shape == "enc_goexit":
		raw := errs.NewPanicError(errs.ErrGoexit).Error()
		return false, &raw
	case c.shape == "wire_unknown", c.shape == "wire_elicit_junk", c.shape == "wire_data", c.shape == "nil_result":
		return false, nil
	case strings.HasPrefix(c.shape, "enc_"):
		return c.shape == "enc_marshal_err" || c.shape == "enc_marshal_panic" || c.shape == "enc_err_panics", nil
	}
	return rawHasSecret(c.shape), nil
}

// panicked reports whether c's failure is a panic (diagnostics get a
// stack).
func panicked(c canaryCall) bool {
	if n, ok := strings.CutPrefix(c.shape, "genok:"); ok {
		seed, _ := strconv.ParseUint(n, 10, 64)
		return genHostileResult(seed, secretFor(c.id)).panics
	}
	return isPanic(c.shape) || c.shape == "enc_marshal_panic" || c.shape == "goexit" || c.shape == "enc_goexit"
}

// requireClean fails if the bytes a client received hold a secret or a
// trace of a Go stack.
func requireClean(t testing.TB, got []byte) {
	t.Helper()
	for _, bad := range []string{canary, "hunter2", "goroutine ", ".go:"} {
		require.NotContainsf(t, string(got), bad, "%q reached the client", bad)
	}
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
			requireClean(t, got)
			res, err := f.call(t, ctx, "typed", map[string]any{"n": 1}, -1)
			require.NoError(t, err, "the server still answers")
			require.False(t, res.IsError, "the server still answers")

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
				has, exact := rawSecret(c)
				require.Equalf(t, d.Raw, a.Raw, "%+v: the row and diagnostics name the same cause", c)
				if exact == nil {
					require.NotEmptyf(t, a.Raw, "%+v", c)
				} else {
					require.Equalf(t, *exact, a.Raw, "After row of %+v", c)
				}
				if has {
					require.Containsf(t, a.Raw, secretFor(c.id), "After row of %+v", c)
					require.Containsf(t, d.Raw, secretFor(c.id), "diagnostics of %+v", c)
				}
				if panicked(c) {
					require.Truef(t, d.Stack, "no stack for %+v", c)
					require.NotContains(t, a.Raw, "goroutine ", "a stack in an After row")
				}
			}
			require.Greater(t, scrubbed, n/2)
		})
	}
}

// callTimeout bounds every call of the property tests, so that a call
// that hangs fails the test instead of stalling it.
const callTimeout = 30 * time.Second

func checkCanaryCall(ctx context.Context, t *testing.T, f *fixture, c canaryCall) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
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
