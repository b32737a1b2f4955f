package adapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// TestSchemaCache: a schema is compiled once per key and JSON; the same
// key with other JSON is compiled again; a failure is remembered; a nil
// cache compiles every time; a hit does not allocate.
func TestSchemaCache(t *testing.T) {
	var c adapter.SchemaCache[string, int]
	calls := 0
	compile := func() (int, error) { calls++; return calls, nil }
	v, err := c.Get("a", []byte(`{"type":"object"}`), compile)
	require.NoError(t, err)
	v2, _ := c.Get("a", []byte(`{"type":"object"}`), compile)
	assert.Equal(t, 1, v)
	assert.Equal(t, 1, v2, "remembered")
	v, _ = c.Get("a", []byte(`{"type":"object","required":["x"]}`), compile)
	assert.Equal(t, 2, v, "a changed schema is compiled again")
	v, _ = c.Get("p", nil, compile)
	v2, _ = c.Get("p", nil, compile)
	assert.Equal(t, 3, v)
	assert.Equal(t, 3, v2, "a key that tells the schema alone")
	fails := 0
	bad := func() (int, error) { fails++; return 0, errors.New("no") }
	_, err = c.Get("b", []byte(`{`), bad)
	require.Error(t, err)
	_, err = c.Get("b", []byte(`{`), bad)
	require.Error(t, err)
	assert.Equal(t, 1, fails, "a failure is remembered")
	var none *adapter.SchemaCache[string, int]
	v, _ = none.Get("a", nil, compile)
	v2, _ = none.Get("a", nil, compile)
	assert.Equal(t, []int{4, 5}, []int{v, v2}, "nil: compiled every time")
	raw := []byte(`{"type":"object"}`)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = c.Get("a", raw, compile) }))
	for i := range 600 {
		_, _ = c.Get(fmt.Sprint(i), nil, compile)
	}
	v, _ = c.Get("p", nil, compile)
	assert.Greater(t, v, 600, "full: the cache started over")
}

// TestPlainAndEncode: Plain says yes only for what certainly encodes;
// EncodeValue checks a json.RawMessage and returns it as it is, and
// EncodeMeta names the key that fails.
func TestPlainAndEncode(t *testing.T) {
	assert.True(t, adapter.Plain(map[string]any{"a": []any{1, "x", 2.5, nil, json.RawMessage(`{}`)}}))
	assert.False(t, adapter.Plain(math.NaN()))
	assert.False(t, adapter.Plain(json.RawMessage(`{`)))
	assert.False(t, adapter.Plain(struct{}{}), "not plain: encode it to find out")

	raw := json.RawMessage(`{"a":1}`)
	got, err := adapter.EncodeValue(raw)
	require.NoError(t, err)
	assert.Equal(t, raw, got)
	_, err = adapter.EncodeValue(json.RawMessage(`nope`))
	require.Error(t, err)
	meta, err := adapter.EncodeMeta(map[string]any{"k": []int{1}})
	require.NoError(t, err)
	assert.Equal(t, json.RawMessage(`[1]`), meta["k"])
	_, err = adapter.EncodeMeta(map[string]any{"bad": make(chan int)})
	require.ErrorContains(t, err, `"bad"`)
	assert.Nil(t, must(adapter.EncodeMeta(nil)))

	assert.Equal(t, map[string]any{"code": "internal"}, adapter.ErrorMeta(errs.Public{Code: errs.CodeInternal, Message: "m"}))
	var dst []int
	require.NoError(t, adapter.Transcode(&dst, []float64{1, 2}))
	assert.Equal(t, []int{1, 2}, dst)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestURLElicitations: only the protocol's fields pass, and only for
// well-formed URL elicitations.
func TestURLElicitations(t *testing.T) {
	b, ok := adapter.URLElicitations([]byte(`{"elicitations":[{"mode":"url","message":"sign in","url":"https://x.example/a","elicitationId":"e1","secret":"s"}],"other":"o"}`))
	require.True(t, ok)
	assert.JSONEq(t, `{"elicitations":[{"mode":"url","message":"sign in","url":"https://x.example/a","elicitationId":"e1"}]}`, string(b))
	for _, bad := range []string{`{}`, `{"elicitations":[]}`, `{"elicitations":[{"mode":"form","url":"https://x.example"}]}`, `{"elicitations":[{"mode":"url","url":"relative"}]}`, `nope`} {
		_, ok := adapter.URLElicitations([]byte(bad))
		assert.False(t, ok, bad)
	}
}

// TestTasks: an execution waits for its link's id and then runs detached
// from the request's context; Cancel ends it; without a link, or with a
// link closed without an id, it runs as it is.
func TestTasks(t *testing.T) {
	var tasks adapter.Tasks[*int]
	key := new(int)
	tasks.Open(key)
	reqCtx, cancelReq := context.WithCancel(context.Background())
	type begun struct {
		ctx context.Context
		id  string
		end func()
	}
	got := make(chan begun)
	go func() {
		ctx, id, end := tasks.Begin(reqCtx, key)
		got <- begun{ctx, id, end}
	}()
	tasks.Close(key, "task-1")
	cancelReq() // the SDK cancels the creating request at once
	var b begun
	select {
	case b = <-got:
	case <-time.After(time.Minute):
		t.Fatal("Begin did not return")
	}
	require.Equal(t, "task-1", b.id)
	require.NoError(t, b.ctx.Err(), "detached from the request")
	tasks.Cancel("task-1")
	select {
	case <-b.ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("Cancel did not end the execution")
	}
	b.end()

	ctx, id, end := tasks.Begin(context.Background(), new(int))
	assert.Empty(t, id, "no link")
	assert.Equal(t, context.Background(), ctx)
	end()
	other := new(int)
	tasks.Open(other)
	tasks.Close(other, "")
	_, id, end = tasks.Begin(context.Background(), other)
	assert.Empty(t, id, "closed without a task")
	end()
	_, id, _ = tasks.Begin(context.Background(), nil)
	assert.Empty(t, id, "a zero key")
}

// TestMarks: a call is entered only once marked open and entered; the mark
// closes when read; a nil *Marks marks nothing.
func TestMarks(t *testing.T) {
	var m adapter.Marks
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Open(ctx)
	m.Enter(ctx)
	assert.True(t, m.Entered(ctx))
	assert.False(t, m.Entered(ctx), "closed once read")
	m.Open(ctx)
	assert.False(t, m.Entered(ctx), "opened, never entered")
	m.Enter(ctx)
	assert.False(t, m.Entered(ctx), "entered without a mark")
	var none *adapter.Marks
	none.Open(ctx)
	none.Enter(ctx)
	assert.False(t, none.Entered(ctx))
}

// TestMarksConcurrent: many calls at once, each its own context, are told
// apart (go test -race), and a call's mark, once the maps have grown,
// allocates nothing: every tools/call makes one.
func TestMarksConcurrent(t *testing.T) {
	var m adapter.Marks
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				ctx, cancel := context.WithCancel(context.Background())
				m.Open(ctx)
				if (g+i)%2 == 0 {
					m.Enter(ctx)
				}
				if !assert.Equal(t, (g+i)%2 == 0, m.Entered(ctx), "call %d of goroutine %d", i, g) {
					cancel()
					return
				}
				cancel()
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	allocs := testing.AllocsPerRun(1000, func() {
		m.Open(ctx)
		m.Enter(ctx)
		m.Entered(ctx)
	})
	assert.Zero(t, allocs, "a mark allocates")
}
