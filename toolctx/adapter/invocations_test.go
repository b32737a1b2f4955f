package adapter_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// Each run of a terminal gets its own state, found through the contexts
// derived from its own; the first costs no allocation, and Last is the
// run that returned last.
func TestInvocations(t *testing.T) {
	var runs adapter.Invocations[int]
	require.Nil(t, runs.Last())
	require.Nil(t, adapter.InvocationFrom[int](context.Background()))
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	first := runs.Start(ctx)
	first.State = 1
	second := runs.Start(ctx)
	second.State = 2
	require.NotSame(t, first, second)
	derived, cancel := context.WithCancel(second)
	defer cancel()
	assert.Same(t, second, adapter.InvocationFrom[int](derived))
	assert.Nil(t, adapter.InvocationFrom[string](derived), "another adapter's state is not this one's")
	assert.Equal(t, "v", derived.Value(key{}), "the terminal's context is under the run's")
	runs.Done(second)
	runs.Done(first)
	assert.Same(t, first, runs.Last())

	fresh, i := make([]adapter.Invocations[int], 2), 0 // AllocsPerRun runs f once more, to warm up
	assert.Zero(t, testing.AllocsPerRun(1, func() {
		r := &fresh[i]
		i++
		r.Done(r.Start(ctx))
	}), "the first run allocates nothing")
}
