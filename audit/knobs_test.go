package audit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

// The rules of package middleware's doc ("Knobs") as audit follows them.

func TestKnobsInterceptorOptions(t *testing.T) {
	var c capture
	assert.NotPanics(t, func() { audit.Interceptor(&c, nil) }, "a nil option is skipped")
	assert.PanicsWithValue(t, "audit.Interceptor: WithArguments(nil): pass a redactor, or leave the option out to record no arguments",
		func() { audit.Interceptor(&c, audit.WithArguments(nil)) }, "it silently recorded nothing")
	assert.PanicsWithValue(t, "audit.Interceptor: WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()",
		func() { audit.Interceptor(&c, audit.WithFallbackLogger(nil)) }, "it silently meant the default")
	assert.PanicsWithValue(t, "audit.Interceptor: the emitter is nil", func() { audit.Interceptor(nil) })
}

// In AsyncConfig a zero field is its default and a negative one a
// mistake (it silently meant the default); MaxRetries documents what its
// negative value means.
func TestKnobsAsyncConfig(t *testing.T) {
	sink := audit.SinkFunc(func(context.Context, []audit.Record) error { return nil })
	for name, cfg := range map[string]audit.AsyncConfig{
		"QueueSize": {QueueSize: -1}, "BatchSize": {BatchSize: -1}, "FlushInterval": {FlushInterval: -1},
		"BlockTimeout": {BlockTimeout: -1}, "Backoff": {Backoff: -1}, "MaxBackoff": {MaxBackoff: -1},
		"WriteTimeout": {WriteTimeout: -1}, "DropLogInterval": {DropLogInterval: -1},
	} {
		assert.PanicsWithValue(t, "audit.NewAsync: AsyncConfig."+name+" must not be negative (zero means the default)",
			func() { audit.NewAsync(sink, cfg) }, name)
	}
	assert.PanicsWithValue(t, "audit.NewAsync: AsyncConfig.Policy 7 is neither Drop nor Block",
		func() { audit.NewAsync(sink, audit.AsyncConfig{Policy: 7}) })
	assert.PanicsWithValue(t, "audit.NewAsync: AsyncConfig.Durability 9 is neither DurabilityMemory nor DurabilityDisk",
		func() { audit.NewAsync(sink, audit.AsyncConfig{Durability: 9}) })
	for _, cfg := range []audit.AsyncConfig{{}, {MaxRetries: -1}} {
		w := audit.NewAsync(sink, cfg)
		require.NoError(t, w.Close(context.Background()), "the zero options, and a negative MaxRetries, are valid")
	}
}

func TestKnobsSpoolConfig(t *testing.T) {
	_, err := audit.OpenSpool(t.TempDir(), audit.SpoolConfig{MaxBytes: -1})
	require.Error(t, err, "a negative size is a mistake")
	assert.True(t, strings.Contains(err.Error(), "must not be negative"), "named: %v", err)
}
