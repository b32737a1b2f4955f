package middleware

// The chain tests follow github.com/justinas/alice's chain_test.go, with
// tool handlers in place of http.Handlers: tag interceptors append their
// tag to a log carried by the context, and the handler appends "app".

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
)

type tagLogKey struct{}

type tagLog struct{ tags []string }

func tagMiddleware(tag string) toolctx.Middleware {
	return func(h toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			l := ctx.Value(tagLogKey{}).(*tagLog)
			l.tags = append(l.tags, tag)
			return h.CallTool(ctx, req)
		})
	}
}

var testApp = toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
	l := ctx.Value(tagLogKey{}).(*tagLog)
	l.tags = append(l.tags, "app")
	return toolctx.TextResult("app")
})

// run calls h and returns the tags in the order they ran.
func run(t *testing.T, h toolctx.Handler) []string {
	t.Helper()
	l := &tagLog{}
	res := h.CallTool(context.WithValue(context.Background(), tagLogKey{}, l), &toolctx.Request{Tool: "t"})
	require.NotNil(t, res, "the handler returned a result")
	return l.tags
}

func funcsEqual(f1, f2 any) bool {
	return reflect.ValueOf(f1).Pointer() == reflect.ValueOf(f2).Pointer()
}

func TestNew(t *testing.T) {
	c1 := func(h toolctx.Handler) toolctx.Handler { return nil }
	c2 := func(h toolctx.Handler) toolctx.Handler { return toolctx.HandlerFunc(nil) }
	slice := []toolctx.Middleware{c1, c2}

	chain := New(slice...)
	require.Len(t, chain.ms, 2, "New keeps every interceptor")
	for k := range slice {
		assert.True(t, funcsEqual(chain.ms[k], slice[k]), "New does not add or reorder interceptors (index %d)", k)
	}
	slice[0] = c2
	assert.True(t, funcsEqual(chain.ms[0], c1), "New copies its argument: changing the caller's slice does not change the chain")
	assert.Equal(t, 2, chain.Len(), "Len")
	assert.Equal(t, 1, New(nil, c1, nil).Len(), "nil interceptors are skipped")
}

func TestThenWorksWithNoMiddleware(t *testing.T) {
	h, err := New().Then(testApp)
	require.NoError(t, err, "Then with no interceptors")
	assert.True(t, funcsEqual(h, testApp), "Then does not wrap when the chain is empty")

	var zero Chain
	h, err = zero.Then(testApp)
	require.NoError(t, err, "the zero Chain is usable")
	assert.Equal(t, []string{"app"}, run(t, h), "the zero chain calls the handler")
}

func TestThenNilIsAnError(t *testing.T) {
	h, err := New(tagMiddleware("t1")).Then(nil)
	assert.ErrorIs(t, err, toolctx.ErrNilHandler, "Then(nil) is an error, not a default")
	assert.Nil(t, h, "no handler on error")

	h, err = New(tagMiddleware("t1")).ThenFunc(nil)
	assert.ErrorIs(t, err, toolctx.ErrNilHandler, "ThenFunc(nil) is an error")
	assert.Nil(t, h, "no handler on error")

	var nilFunc toolctx.HandlerFunc
	_, err = New().Then(nilFunc)
	assert.NoError(t, err, "a non-nil interface holding a nil func is the caller's handler, not nil")
}

func TestThenFuncConstructsHandlerFunc(t *testing.T) {
	fn := func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult { return toolctx.TextResult("x") }
	h, err := New().ThenFunc(fn)
	require.NoError(t, err, "ThenFunc")
	assert.Equal(t, reflect.TypeOf(toolctx.HandlerFunc(nil)), reflect.TypeOf(h), "ThenFunc wraps the function in a HandlerFunc")
}

func TestThenOrdersHandlersCorrectly(t *testing.T) {
	chain := New(tagMiddleware("t1"), tagMiddleware("t2"), tagMiddleware("t3"))
	h, err := chain.Then(testApp)
	require.NoError(t, err, "Then")
	assert.Equal(t, []string{"t1", "t2", "t3", "app"}, run(t, h), "the first interceptor is the outermost")

	// Then may be called again; each call wraps anew.
	h2, err := chain.Then(testApp)
	require.NoError(t, err, "Then again")
	assert.Equal(t, []string{"t1", "t2", "t3", "app"}, run(t, h2), "a second Then gives the same order")
}

func TestAppendAddsHandlersCorrectly(t *testing.T) {
	chain := New(tagMiddleware("t1"), tagMiddleware("t2"))
	newChain := chain.Append(tagMiddleware("t3"), tagMiddleware("t4"))

	assert.Equal(t, 2, chain.Len(), "Append does not change the original chain")
	assert.Equal(t, 4, newChain.Len(), "Append adds the interceptors")

	h, err := newChain.Then(testApp)
	require.NoError(t, err, "Then")
	assert.Equal(t, []string{"t1", "t2", "t3", "t4", "app"}, run(t, h), "appended interceptors are inside")
	h, err = chain.Then(testApp)
	require.NoError(t, err, "Then")
	assert.Equal(t, []string{"t1", "t2", "app"}, run(t, h), "the original chain is unchanged")
}

func TestAppendRespectsImmutability(t *testing.T) {
	chain := New(tagMiddleware(""))
	newChain := chain.Append(tagMiddleware(""))
	assert.NotSame(t, &chain.ms[0], &newChain.ms[0], "Append does not share the original's backing array")

	// Two appends to the same chain must not see each other, even when
	// the first result has spare capacity.
	base := New(tagMiddleware("a")).Append(tagMiddleware("b"))
	x := base.Append(tagMiddleware("x"))
	y := base.Append(tagMiddleware("y"))
	hx, err := x.Then(testApp)
	require.NoError(t, err, "Then x")
	hy, err := y.Then(testApp)
	require.NoError(t, err, "Then y")
	assert.Equal(t, []string{"a", "b", "x", "app"}, run(t, hx), "the first append is not overwritten by the second")
	assert.Equal(t, []string{"a", "b", "y", "app"}, run(t, hy), "the second append")
}

func TestExtendAddsHandlersCorrectly(t *testing.T) {
	chain1 := New(tagMiddleware("t1"), tagMiddleware("t2"))
	chain2 := New(tagMiddleware("t3"), tagMiddleware("t4"))
	newChain := chain1.Extend(chain2)

	assert.Equal(t, 2, chain1.Len(), "Extend does not change the receiver")
	assert.Equal(t, 2, chain2.Len(), "Extend does not change its argument")
	assert.Equal(t, 4, newChain.Len(), "Extend adds the interceptors")

	h, err := newChain.Then(testApp)
	require.NoError(t, err, "Then")
	assert.Equal(t, []string{"t1", "t2", "t3", "t4", "app"}, run(t, h), "the extension's interceptors are inside")
	h, err = chain1.Then(testApp)
	require.NoError(t, err, "Then")
	assert.Equal(t, []string{"t1", "t2", "app"}, run(t, h), "the receiver is unchanged")
	h, err = chain2.Then(testApp)
	require.NoError(t, err, "Then")
	assert.Equal(t, []string{"t3", "t4", "app"}, run(t, h), "the argument is unchanged")
}

func TestExtendRespectsImmutability(t *testing.T) {
	chain := New(tagMiddleware(""))
	newChain := chain.Extend(New(tagMiddleware("")))
	assert.NotSame(t, &chain.ms[0], &newChain.ms[0], "Extend does not share the receiver's backing array")
}

func TestMiddlewareEquivalence(t *testing.T) {
	chain := New(tagMiddleware("t1"), tagMiddleware("t2"), tagMiddleware("t3"))
	viaThen, err := chain.Then(testApp)
	require.NoError(t, err, "Then")
	viaMiddleware := chain.Middleware()(testApp)
	assert.Equal(t, run(t, viaThen), run(t, viaMiddleware), "Middleware()(h) behaves like Then(h)")

	m := chain.Middleware()
	_ = chain.Append(tagMiddleware("t4"))
	assert.Equal(t, []string{"t1", "t2", "t3", "app"}, run(t, m(testApp)), "a later Append does not change a Middleware taken earlier")

	v := func() (v any) {
		defer func() { v = recover() }()
		m(nil)
		return nil
	}()
	perr, isErr := v.(error)
	require.True(t, isErr, "Middleware()(nil) panics with an error, not %T", v)
	assert.ErrorIs(t, perr, toolctx.ErrNilHandler, "Middleware()(nil) panics with ErrNilHandler")
	assert.ErrorContains(t, perr, "Chain.Middleware", "naming where the nil was given")
	assert.Equal(t, []string{"app"}, run(t, New().Middleware()(testApp)), "an empty chain's Middleware is the identity")

	// A chain is itself a Middleware and nests in another chain.
	outer := New(tagMiddleware("o"), chain.Middleware(), tagMiddleware("i"))
	h, err := outer.Then(testApp)
	require.NoError(t, err, "Then")
	assert.Equal(t, []string{"o", "t1", "t2", "t3", "i", "app"}, run(t, h), "a nested chain keeps its order")
}

func TestThenInterceptorReturningNil(t *testing.T) {
	broken := func(toolctx.Handler) toolctx.Handler { return nil }
	h, err := New(tagMiddleware("t1"), broken, tagMiddleware("t3")).Then(testApp)
	assert.ErrorIs(t, err, toolctx.ErrNilHandler, "an interceptor returning nil is a construction error")
	assert.ErrorContains(t, err, "interceptor 2 of 3", "the error names the interceptor")
	assert.Nil(t, h, "no handler on error")
	assert.Panics(t, func() { New(broken).Middleware()(testApp) }, "Middleware() panics on a broken interceptor")
}
