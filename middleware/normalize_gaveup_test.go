package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// hangs is a handler's error whose methods named wait until release is
// closed: an Unwrap, Is or As that waits on a lock or the network.
type hangs struct {
	release        chan struct{}
	unwrap, is, as bool
}

func (h hangs) Error() string { return "dial 10.0.0.7:5432: refused" }
func (h hangs) Unwrap() error {
	if h.unwrap {
		<-h.release
	}
	return nil
}
func (h hangs) Is(error) bool {
	if h.is {
		<-h.release
	}
	return false
}
func (h hangs) As(any) bool {
	if h.as {
		<-h.release
	}
	return false
}

// selfNormalizing's Is normalizes its own error.
type selfNormalizing struct{}

func (selfNormalizing) Error() string { return "self" }
func (s selfNormalizing) Is(error) bool {
	pub, _ := errs.Normalize(s)
	return pub.Code == errs.CodeCanceled
}

// A handler's error whose Unwrap, Is or As does not return (or recurses)
// ends the call as an internal failure within the bound, and the audit row
// says why: normalization gave up, naming the method and its type, with
// the error's own text; the client's result holds none of it.
func TestNormalizeGaveUpRowSaysWhy(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for name, c := range map[string]struct {
		err    error
		cancel bool // the call's context ends first: rule 4 asks Is
		says   string
	}{
		"Unwrap":      {err: hangs{release: release, unwrap: true}, says: "(middleware_test.hangs).Unwrap did not return within 1s"},
		"As":          {err: fmt.Errorf("load: %w", hangs{release: release, as: true}), says: "(middleware_test.hangs).As did not return within 1s"},
		"Is":          {err: errors.Join(errors.New("x"), hangs{release: release, is: true}), cancel: true, says: "(middleware_test.hangs).Is did not return within 1s"},
		"Is recurses": {err: selfNormalizing{}, cancel: true, says: "(middleware_test.selfNormalizing).Is recursed"},
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var rows []audit.Record
			emit := audit.EmitterFunc(func(_ context.Context, r audit.Record) {
				mu.Lock()
				defer mu.Unlock()
				rows = append(rows, r)
			})
			h, err := middleware.New(audit.Interceptor(emit), middleware.Normalize(errs.Normalizer{})).Then(
				toolctx.HandlerFunc(func(ctx context.Context, _ *toolctx.Request) *toolctx.CallResult {
					if c.cancel {
						<-ctx.Done()
					}
					return toolctx.ErrorResult(c.err)
				}))
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				cancel()
			}
			done := make(chan *toolctx.CallResult, 1)
			go func() { done <- h.CallTool(ctx, newReq("t")) }()
			var res *toolctx.CallResult
			select {
			case res = <-done:
			case <-time.After(30 * errs.MaxNormalizeTime):
				t.Fatal("the call did not end")
			}
			require.NotNil(t, res.Error)
			if !c.cancel {
				assert.Equal(t, errs.CodeInternal, res.Error.Code, "an internal failure")
			}
			assert.NotContains(t, fmt.Sprint(res.Content), "10.0.0.7")
			var g *errs.GaveUpError
			require.ErrorAs(t, res.Cause(), &g, "the cause says why")
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, rows, 1)
			assert.Contains(t, rows[0].Message, "normalization gave up: "+c.says, "the row says why")
			if name != "Is recurses" {
				assert.Contains(t, rows[0].Message, "dial 10.0.0.7:5432: refused", "and keeps the raw text")
			}
		})
	}
}
