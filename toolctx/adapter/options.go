package adapter

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

// Option configures an adapter: the options every adapter takes.
type Option func(*Config)

// Config is an adapter's options, resolved by [NewConfig]. Its zero value
// is the defaults.
type Config struct {
	// Name starts every line the kit logs ("toolmw/mcpsdk", say).
	Name string
	// Transport is what [WithTransport] gave; empty when it was not given
	// (each adapter says what it detects then).
	Transport toolctx.Transport
	// Normalizer is what [WithNormalizer] gave; default errs.Normalizer{}.
	Normalizer errs.Normalizer
	// Logger is what [WithFallbackLogger] gave; nil means slog.Default(),
	// read when a line is logged.
	Logger *slog.Logger
	// Visible is what [WithVisibility] gave; nil: every tool is visible.
	// Read it through [Config.Hidden].
	Visible func(req *toolctx.Request) bool

	mistake string // the first option given a value it cannot use
}

// NewConfig applies opts, in order, to the defaults for the adapter name
// (see [Config.Name]) and its constructor ctor ("mcpsdk.AddTool", say). A
// nil Option is skipped. An option given a value it cannot use
// (WithFallbackLogger(nil), say) is an error naming ctor and the option
// (see middleware's package doc, "Knobs").
func NewConfig(name, ctor string, opts ...Option) (*Config, error) {
	c := &Config{Name: name}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.mistake != "" {
		return nil, errors.New(ctor + ": " + c.mistake)
	}
	return c, nil
}

// NewToolConfig is NewConfig for an adapter's tool registration ctor, after
// what every registration checks first, in this order: a nil handler
// (nilHandler) is an error wrapping [toolctx.ErrNilHandler], and a tool name
// outside the MCP rules an [*errs.ToolNameError].
func NewToolConfig(name, ctor, tool string, nilHandler bool, opts ...Option) (*Config, error) {
	if nilHandler {
		return nil, fmt.Errorf("%w: %s was given nil", toolctx.ErrNilHandler, ctor)
	}
	c, err := NewConfig(name, ctor, opts...)
	if err != nil {
		return nil, err
	}
	if err := errs.CheckToolName(tool); err != nil {
		return nil, err
	}
	return c, nil
}

// MustConfig is [NewConfig] for a constructor that cannot return an error:
// it panics with the error.
func MustConfig(name, ctor string, opts ...Option) *Config {
	c, err := NewConfig(name, ctor, opts...)
	if err != nil {
		panic(err)
	}
	return c
}

// fail records the first mistake of the options.
func (c *Config) fail(mistake string) {
	if c.mistake == "" {
		c.mistake = mistake
	}
}

// WithTransport names the transport the server is connected with, for
// [toolctx.Request.Transport], where the adapter cannot tell it from the SDK
// (each adapter says what it detects). An empty t is a mistake.
func WithTransport(t toolctx.Transport) Option {
	return func(c *Config) {
		if t == "" {
			c.fail(`WithTransport(""): name a transport, or leave the option out for the adapter's detection`)
			return
		}
		c.Transport = t
	}
}

// WithNormalizer sets the rules the adapter applies to failures that reach
// it unnormalized (the chain has no middleware.Normalize, or a failure
// arises outside it). Use the same normalizer as the chain's
// middleware.Normalize. Default: errs.Normalizer{}.
func WithNormalizer(n errs.Normalizer) Option {
	return func(c *Config) { c.Normalizer = n }
}

// WithFallbackLogger sets where the adapter reports what the chain's own
// hooks cannot: a panic that escaped the whole chain (no middleware.Recover
// in it, or an interceptor outside it panicked), a runtime.Goexit during a
// call, and a result the chain returned that cannot be sent. Such
// a report holds the raw value (and a panic's stack) and stays on the
// server; the client gets the generic message. A logger that panics is
// ignored. Default: slog.Default(); a nil l is a mistake.
func WithFallbackLogger(l *slog.Logger) Option {
	return func(c *Config) {
		if l == nil {
			c.fail("WithFallbackLogger(nil): pass a logger, or leave the option out for slog.Default()")
			return
		}
		c.Logger = l
	}
}

// logger is the fallback logger.
func (c *Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}
