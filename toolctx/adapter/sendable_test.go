package adapter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

type refuse struct{ err error }

func (r refuse) CheckResult(*toolctx.CallResult) error { return r.err }

func TestSendable(t *testing.T) {
	res := toolctx.TextResult("ok").WithNote("k", "v")
	require.Same(t, res, adapter.Sendable(context.Background(), res), "no checker: r as it is")
	require.Nil(t, adapter.Sendable(context.Background(), nil), "nil stays nil")
	ctx := adapter.WithResultChecker(context.Background(), refuse{})
	require.Same(t, res, adapter.Sendable(ctx, res), "a checker that accepts: r as it is")

	why := errors.New("json: unsupported type: chan int")
	ctx = adapter.WithResultChecker(context.Background(), refuse{err: why})
	out := adapter.Sendable(ctx, res)
	require.True(t, out.Failed(), "an unsendable result is a failure")
	require.Nil(t, out.Error, "a raw failure, for the chain to normalize")
	require.ErrorIs(t, out.Cause(), adapter.ErrUnsendable, "the cause is marked")
	require.ErrorIs(t, out.Cause(), why, "and wraps the adapter's reason")
	require.Contains(t, out.Cause().Error(), why.Error(), "the reason is in the cause's text")
	v, ok := out.Note("k")
	require.True(t, ok, "notes are kept")
	require.Equal(t, "v", v)
	require.Equal(t, ctx, adapter.WithResultChecker(ctx, nil), "a nil checker adds nothing")
}
