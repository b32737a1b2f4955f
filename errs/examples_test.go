package errs_test

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/toolmw/toolmw/errs"
)

func ExampleNormalize() {
	// An explicit public error: the client sees its code and message; its
	// private cause stays on the server.
	sqlErr := errors.New("pq: password authentication failed for user admin")
	pub, scrubbed := errs.Normalize(fmt.Errorf("load invoice: %w", errs.NotFound("no such invoice").WithCause(sqlErr)))
	fmt.Println(pub.Code, "|", pub.Message, "|", scrubbed)

	// A raw error: scrubbed to the generic message.
	pub, scrubbed = errs.Normalize(sqlErr)
	fmt.Println(pub.Code, "|", pub.Message, "|", scrubbed)

	// A mapping of the user's own errors, passed in rather than registered.
	n := errs.Normalizer{Map: func(err error) *errs.Error {
		if errors.Is(err, sql.ErrNoRows) {
			return errs.NotFound("no such record")
		}
		return nil
	}}
	pub, scrubbed = n.Normalize(fmt.Errorf("select: %w", sql.ErrNoRows))
	fmt.Println(pub.Code, "|", pub.Message, "|", scrubbed)
	// Output:
	// not_found | no such invoice | false
	// internal | internal error: the tool failed; the cause was recorded on the server | true
	// not_found | no such record | false
}

// A diagnostics hook reaches a panic's value and stack through the call's
// cause; the text of any raw cause, for a log, through Describe.
func ExamplePanicOf() {
	report := func(cause error) {
		if pe := errs.PanicOf(cause); pe != nil {
			fmt.Println("panic:", pe.Value, "| stack captured:", len(pe.Stack) > 0)
			return
		}
		fmt.Println("error:", errs.Describe(cause))
	}
	report(fmt.Errorf("wrapped: %w", errs.NewPanicError("index out of range")))
	report(fmt.Errorf("load: %w", errs.NotFound("no such invoice").WithCause(errors.New("pq: no rows"))))
	// Output:
	// panic: index out of range | stack captured: true
	// error: load: no such invoice [cause of not_found: pq: no rows]
}
