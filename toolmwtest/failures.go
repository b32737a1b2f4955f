package toolmwtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolmwtest/shapes"
)

// Kind says what a server that keeps the one rule does with a failure, so
// that a runner knows what to check besides "no canary reached the client".
type Kind int

const (
	// Raw is a raw error: the client gets a generic message; diagnostics and
	// the audit row get the raw text, canary included.
	Raw Kind = iota
	// PublicWrapping is an explicit public error (an [*errs.Error]) with the
	// canary in a wrapped cause or in a raw wrapper around it: the client
	// gets the public message only, and nothing of the canary.
	PublicWrapping
	// Panic is a panic whose value holds the canary: the client gets a
	// generic message, the server keeps running, diagnostics get the value
	// and the stack, the audit row the value.
	Panic
	// Opaque is a failure whose raw side cannot show the canary (a panic of
	// nil or a runtime error, a Goexit, an error whose Error method
	// panics): only that nothing leaks and that the server survives is
	// checked.
	Opaque
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Raw:
		return "raw"
	case PublicWrapping:
		return "public wrapping"
	case Panic:
		return "panic"
	case Opaque:
		return "opaque"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// CanaryPrefix starts every canary: the runners also flag any occurrence of
// it, in case a server cut a canary short.
const CanaryPrefix = "TOOLMWTEST-CANARY-"

// Failure is one hostile way for a tool to fail. Call it from a tool handler:
// it returns the error, panics or calls runtime.Goexit.
type Failure struct {
	// Shape describes how the failure is built ("raw error wrapped 3× with
	// %w, then joined"), for reports.
	Shape string
	// Canary is the secret the failure carries: it must never reach the
	// client.
	Canary string
	// Kind is what the server side should keep of it.
	Kind Kind

	fail func() error
}

// Call fails as the failure's shape says: it returns the error, or panics,
// or calls runtime.Goexit.
func (f Failure) Call() error { return f.fail() }

// Generate returns n failures, the same for the same seed: first one of each
// fixed shape (as many as n allows), then random compositions of them, each
// with a fresh canary.
func Generate(seed int64, n int) []Failure {
	r := rand.New(rand.NewSource(seed))
	out := make([]Failure, 0, n)
	for i := 0; len(out) < n; i++ {
		c := canary(r)
		if i < len(fixedShapes) {
			out = append(out, fixedShapes[i](c))
			continue
		}
		out = append(out, composed(r, c))
	}
	return out
}

func canary(r *rand.Rand) string {
	return fmt.Sprintf("%s%016x-postgres://admin:s3cr3t@db-%d.internal:5432/prod", CanaryPrefix, r.Uint64(), r.Intn(100))
}

// The error types the shapes use. Each keeps the canary where only a
// server-side rendering may show it.
type (
	// ptrError has a pointer receiver.
	ptrError struct{ secret string }
	// valueError has a value receiver.
	valueError struct{ secret string }
	// multiError wraps several errors through Unwrap() []error.
	multiError []error
	// stringer is a panic value with a String method.
	stringer struct{ secret string }
	// secretStruct is a panic value whose field holds the canary.
	secretStruct struct {
		DSN   string
		Table string
	}
)

func (e *ptrError) Error() string    { return "backend: " + e.secret }
func (e valueError) Error() string   { return "value error: " + e.secret }
func (m multiError) Error() string   { return fmt.Sprintf("%d errors: %v", len(m), []error(m)) }
func (m multiError) Unwrap() []error { return m }
func (s stringer) String() string    { return "stringer " + s.secret }

// lookalikes are texts a raw message may start with to pass for something
// the SDKs or toolmw produce themselves.
var lookalikes = []string{
	`validating "arguments": `,
	"invalid arguments: ",
	`unknown tool "`,
	"invalid params: ",
	`{"jsonrpc":"2.0","error":{"code":-32602,"message":"`,
	"internal error: the tool failed; the cause was recorded on the server\n",
	"the tool call was canceled: ",
	"context deadline exceeded: ",
	"tool execution failed: ",
}

func returning(err error) func() error { return func() error { return err } }

func panicking(v any) func() error { return func() error { panic(v) } }

var baseShapes = []func(c string) Failure{
	func(c string) Failure { return Failure{"raw errors.New", c, Raw, returning(errors.New(c))} },
	func(c string) Failure {
		return Failure{"raw error wrapped with %w", c, Raw, returning(fmt.Errorf("load invoice 42: %w", errors.New(c)))}
	},
	func(c string) Failure {
		return Failure{"raw error formatted with %v (no wrapping)", c, Raw, returning(fmt.Errorf("query failed: %v", errors.New(c)))}
	},
	func(c string) Failure {
		return Failure{"errors.Join of noise and the raw error", c, Raw, returning(errors.Join(errors.New("first"), errors.New(c)))}
	},
	func(c string) Failure {
		return Failure{"custom type, pointer receiver", c, Raw, returning(&ptrError{c})}
	},
	func(c string) Failure {
		return Failure{"custom type, value receiver", c, Raw, returning(valueError{c})}
	},
	func(c string) Failure {
		return Failure{"Unwrap() []error", c, Raw, returning(multiError{errors.New("a"), &ptrError{c}})}
	},
	func(c string) Failure {
		return Failure{"fmt.Formatter error", c, Raw, returning(shapes.FormatterError{Secret: c})}
	},
	func(c string) Failure {
		return Failure{"raw text that looks like SDK validation feedback", c, Raw, returning(errors.New(lookalikes[0] + c))}
	},
	func(c string) Failure {
		return Failure{"raw text that looks like an unknown-tool error", c, Raw, returning(fmt.Errorf(`unknown tool %q`, c))}
	},
	func(c string) Failure {
		return Failure{"raw error wrapping context.Canceled", c, Raw, returning(fmt.Errorf("%s: %w", c, context.Canceled))}
	},
	func(c string) Failure {
		return Failure{"raw error joined with context.DeadlineExceeded", c, Raw, returning(errors.Join(errors.New(c), context.DeadlineExceeded))}
	},
	func(c string) Failure {
		return Failure{"huge raw message (256 KiB)", c, Raw, returning(errors.New(strings.Repeat("x", 128<<10) + c + strings.Repeat("y", 128<<10)))}
	},
	func(c string) Failure {
		return Failure{"raw message with newlines, quotes and control bytes", c, Raw, returning(errors.New("line1\n\"quoted\"\t\x00\x1b[31m" + c + "\r\n\u2028end"))}
	},
	func(c string) Failure {
		return Failure{"errs.Error with a secret cause", c, PublicWrapping, returning(errs.NotFound("no such invoice").WithCause(errors.New(c)))}
	},
	func(c string) Failure {
		return Failure{"raw wrapper naming the canary around an errs.Error", c, PublicWrapping,
			returning(fmt.Errorf("%s: %w", c, errs.PermissionDenied("not allowed").WithCause(errors.New(c))))}
	},
	func(c string) Failure {
		return Failure{"errs.Error joined with a raw error", c, PublicWrapping, returning(errors.Join(errors.New(c), errs.Unavailable("try later")))}
	},
	func(c string) Failure { return Failure{"panic(string)", c, Panic, panicking("boom: " + c)} },
	func(c string) Failure {
		return Failure{"panic(error)", c, Panic, panicking(fmt.Errorf("wrapped: %w", errors.New(c)))}
	},
	func(c string) Failure {
		return Failure{"panic(struct)", c, Panic, panicking(secretStruct{DSN: c, Table: "invoices"})}
	},
	func(c string) Failure { return Failure{"panic(fmt.Stringer)", c, Panic, panicking(stringer{c})} },
	func(c string) Failure {
		return Failure{"panic(*errs.Error)", c, Panic, panicking(errs.NotFound(c))}
	},
	func(c string) Failure { return Failure{"panic(nil)", c, Opaque, panicking(nil)} },
	func(c string) Failure {
		return Failure{"nil map write", c, Opaque, func() error {
			var m map[string]string
			//lint:ignore SA5000 the shape is this very panic
			m[c] = c
			return nil
		}}
	},
	func(c string) Failure {
		return Failure{"index out of range", c, Opaque, func() error {
			s := []string{c}
			i := len(c)
			return errors.New(s[i])
		}}
	},
	func(c string) Failure {
		return Failure{"runtime.Goexit", c, Opaque, func() error {
			runtime.Goexit()
			return errors.New(c)
		}}
	},
	func(c string) Failure {
		return Failure{"an error whose Error method panics", c, Opaque, returning(shapes.ErrorPanics{Secret: c})}
	},
	func(c string) Failure {
		return Failure{"panic whose value's Error method panics", c, Opaque, panicking(shapes.ErrorPanics{Secret: c})}
	},
}

// composed returns a random composition: a base raw error or panic value,
// disguised, wrapped and joined at random.
func composed(r *rand.Rand, c string) Failure {
	var shape []string
	text := c
	if r.Intn(3) == 0 {
		l := lookalikes[r.Intn(len(lookalikes))]
		text = l + c
		shape = append(shape, fmt.Sprintf("disguised as %q", strings.TrimSpace(l)))
	}
	if r.Intn(8) == 0 {
		n := 1 << (10 + r.Intn(8)) // 1 KiB to 128 KiB of padding
		text = strings.Repeat("=", n) + text
		shape = append(shape, fmt.Sprintf("%d bytes of padding", n))
	}
	var err error
	switch r.Intn(4) {
	case 0:
		err = errors.New(text)
		shape = append([]string{"errors.New"}, shape...)
	case 1:
		err = &ptrError{text}
		shape = append([]string{"custom pointer type"}, shape...)
	case 2:
		err = valueError{text}
		shape = append([]string{"custom value type"}, shape...)
	default:
		err = shapes.FormatterError{Secret: text}
		shape = append([]string{"fmt.Formatter"}, shape...)
	}
	for depth := r.Intn(4); depth > 0; depth-- {
		switch r.Intn(3) {
		case 0:
			err = fmt.Errorf("layer: %w", err)
			shape = append(shape, "wrapped with %w")
		case 1:
			err = errors.Join(errors.New("noise"), err)
			shape = append(shape, "joined")
		default:
			err = multiError{err, errors.New("other")}
			shape = append(shape, "in Unwrap() []error")
		}
	}
	kind, fail := Raw, returning(err)
	switch r.Intn(5) {
	case 0:
		kind, fail = Panic, panicking(err)
		shape = append(shape, "then panicked with")
	case 1:
		kind, fail = PublicWrapping, returning(errs.Unavailable("the backend is unavailable").WithCause(err))
		shape = append(shape, "as the cause of an errs.Error")
	}
	return Failure{Shape: "random: " + strings.Join(shape, ", "), Canary: c, Kind: kind, fail: fail}
}

// NewFailure returns a failure of an SDK's own shape: call fails as the
// shape says. The runners of the SDK subpackages add such shapes (an SDK's
// wire error type, an unencodable result) to those of [Generate].
func NewFailure(shape, canary string, kind Kind, call func() error) Failure {
	return Failure{Shape: shape, Canary: canary, Kind: kind, fail: call}
}

// Unencodable is structured content whose JSON encoding fails with an error
// naming Secret: a success the server cannot send. The SDK runners return it
// from their "unencodable output" tools.
type Unencodable struct{ Secret string }

// MarshalJSON fails, naming the secret.
func (u Unencodable) MarshalJSON() ([]byte, error) {
	return nil, errors.New("cannot encode " + u.Secret)
}

// Carry returns an error that carries res through [Failure.Call], for an SDK's
// own failure shapes that are results, not errors (an unencodable success).
func Carry[R any](res R) error { return carried[R]{res} }

// Carried returns the result [Carry] put in err, if it did.
func Carried[R any](err error) (R, bool) {
	c, ok := err.(carried[R])
	return c.res, ok
}

type carried[R any] struct{ res R }

func (carried[R]) Error() string { return "toolmwtest: a result, not an error" }

// FailuresEnv is the environment variable through which a runner tells a
// server binary it serves over stdio which failures to register:
// "seed,count" (toolmwtest/mcpsdktest's Command transport sets it).
const FailuresEnv = "TOOLMWTEST_FAILURES"

// FailuresFromEnv returns gen(seed, count) for the seed and count in
// [FailuresEnv] (gen is [Generate], or an SDK kit's Failures, which adds
// shapes of its SDK), for a server binary to register; nil when the
// variable is unset, and an error when it is malformed.
func FailuresFromEnv(gen func(seed int64, n int) []Failure) ([]Failure, error) {
	v := os.Getenv(FailuresEnv)
	if v == "" {
		return nil, nil
	}
	a, b, ok := strings.Cut(v, ",")
	var seed int64
	var n int
	var err error
	if ok {
		seed, err = strconv.ParseInt(a, 10, 64)
	}
	if ok && err == nil {
		n, err = strconv.Atoi(b)
	}
	if !ok || err != nil || n < 0 {
		return nil, fmt.Errorf("toolmwtest: %s=%q: want \"seed,count\", such as \"1,100\"", FailuresEnv, v)
	}
	return gen(seed, n), nil
}

// GenerateWith is [Generate](seed, n) and, after those, up to n/10 (at
// least one) of an SDK's own shapes, each with a fresh canary tagged tag:
// what an SDK kit's Failures returns. The same seed gives the same
// failures.
func GenerateWith(seed int64, n int, shapes []func(canary string) Failure, tag string) []Failure {
	fs := Generate(seed, n)
	r := rand.New(rand.NewSource(seed ^ int64(len(tag))<<32 ^ 0x5eed))
	for i := range min(len(shapes), max(1, n/10)) {
		fs = append(fs, shapes[i](fmt.Sprintf("%s%016x-%s", CanaryPrefix, r.Uint64(), tag)))
	}
	return fs
}
