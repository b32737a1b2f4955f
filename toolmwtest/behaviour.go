package toolmwtest

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The tools of the behaviour-table check, one per row; the SDK runners
// register them (each SDK's CheckBehaviour) with the behaviour the name says,
// and [CheckRows] calls them.
const (
	// RowInvalid takes {"count": integer}; it is called with a string.
	RowInvalid = "toolmwtest_row_invalid_arguments"
	// RowPublic returns errs.NotFound(RowPublicMessage) wrapping the secret.
	RowPublic = "toolmwtest_row_public_error"
	// RowOwnIsError returns its own isError result RowOwnText.
	RowOwnIsError = "toolmwtest_row_own_iserror"
	// RowRaw returns a raw error naming the secret.
	RowRaw = "toolmwtest_row_raw_error"
	// RowPanic panics with the secret.
	RowPanic = "toolmwtest_row_panic"
	// RowUnencodable succeeds with structured content whose encoding fails
	// naming the secret.
	RowUnencodable = "toolmwtest_row_unencodable_output"
	// RowUnknown is never registered.
	RowUnknown = "toolmwtest_row_no_such_tool"
)

// The texts the row tools use.
const (
	RowPublicMessage = "no such order"
	RowOwnText       = "the order is locked"
	RowCountText     = "counted" // RowInvalid's answer to valid arguments
)

// CountArgs are the arguments [RowInvalid] takes: {"count": integer},
// required; an SDK kit's AddCountTool decodes them with its SDK's typed
// handler.
type CountArgs struct {
	Count int `json:"count"`
}

// CheckRows calls the row tools over conn (registered with secret) and adds
// to res a problem for each row of the behaviour table the server breaks:
// an unknown tool is a protocol error; invalid arguments get public feedback
// naming the argument; an explicit public error shows its message and never
// its cause; a handler's own isError result is shown as it is; a raw error,
// a panic and an output that cannot be encoded get the same generic isError
// result without structured content, and the server keeps running. With
// causes, diagnostics and the row must have the raw text, and public errors
// no diagnostics event. It does not close conn.
func CheckRows(ctx context.Context, conn Conn, secret string, causes *Causes, timeout time.Duration, res *Result) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	b := &behaviour{res: res, conn: conn, secret: secret, timeout: timeout, causes: causes}
	b.check(ctx)
}

type behaviour struct {
	res     *Result
	conn    Conn
	secret  string
	timeout time.Duration
	causes  *Causes
}

// outcome is what the client got for one call.
type outcome struct {
	protocolErr error
	isError     bool
	text        string
	structured  bool
	received    []byte
}

func (b *behaviour) call(ctx context.Context, tool string, args map[string]any) outcome {
	from := b.conn.Received.Len()
	cctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	a, err := b.conn.CallTool(cctx, tool, args)
	b.res.Calls++
	return outcome{protocolErr: err, isError: a.IsError, text: a.Text, structured: a.Structured, received: b.conn.Received.Since(from)}
}

func (b *behaviour) fail(row, format string, args ...any) {
	b.res.problem(Problem{Transport: b.conn.Transport, Tool: row, Shape: "behaviour table", Issue: fmt.Sprintf(format, args...)})
}

func (b *behaviour) noSecret(row string, o outcome) {
	if strings.Contains(string(o.received), b.secret) {
		b.fail(row, "the raw cause reached the client: %s", Scan(o.received, []string{b.secret})[0].Context)
	}
}

func (b *behaviour) check(ctx context.Context) {
	raw := b.call(ctx, RowRaw, nil)
	generic := raw.text
	switch {
	case raw.protocolErr != nil:
		b.fail(RowRaw, "a raw handler error must be an isError result with a generic message, got a protocol error: %v", raw.protocolErr)
	case !raw.isError || generic == "":
		b.fail(RowRaw, "a raw handler error must be an isError result with a generic message, got isError=%v %q", raw.isError, raw.text)
	case raw.structured:
		b.fail(RowRaw, "a raw handler error's result must carry no structured content")
	}
	b.noSecret(RowRaw, raw)

	for _, row := range []string{RowPanic, RowUnencodable} {
		o := b.call(ctx, row, nil)
		if o.protocolErr != nil || !o.isError || o.text != generic {
			b.fail(row, "must get the same generic isError result as a raw error (%q), got isError=%v %q (protocol error: %v)", generic, o.isError, o.text, o.protocolErr)
		}
		b.noSecret(row, o)
	}
	if after := b.call(ctx, RowRaw, nil); after.protocolErr != nil || after.text != generic {
		b.fail(RowPanic, "the server must keep running after a panic; the next call got %q (%v)", after.text, after.protocolErr)
	}

	inv := b.call(ctx, RowInvalid, map[string]any{"count": "seven"})
	if inv.protocolErr != nil || !inv.isError || inv.text == generic || !strings.Contains(inv.text, "count") {
		b.fail(RowInvalid, "invalid arguments must get public feedback that names the argument, got isError=%v %q (protocol error: %v)", inv.isError, inv.text, inv.protocolErr)
	}

	pub := b.call(ctx, RowPublic, nil)
	if pub.protocolErr != nil || !pub.isError || !strings.Contains(pub.text, RowPublicMessage) {
		b.fail(RowPublic, "an explicit public error must show its public message, got isError=%v %q (protocol error: %v)", pub.isError, pub.text, pub.protocolErr)
	}
	b.noSecret(RowPublic, pub)

	own := b.call(ctx, RowOwnIsError, nil)
	if own.protocolErr != nil || !own.isError || own.text != RowOwnText {
		b.fail(RowOwnIsError, "a handler's own isError result must be shown as it is, got isError=%v %q (protocol error: %v)", own.isError, own.text, own.protocolErr)
	}

	if unk := b.call(ctx, RowUnknown, nil); unk.protocolErr == nil {
		b.fail(RowUnknown, "an unknown tool must be a protocol error, got isError=%v %q", unk.isError, unk.text)
	}

	if c := b.causes; c != nil {
		if !c.SawDiagnostic(b.secret) {
			b.fail(RowRaw, "diagnostics must get the raw error, the panic and the encoding failure: the raw text reached no diagnostics event")
		}
		if !c.SawRow(b.secret) {
			b.fail(RowRaw, "the audit row must record the raw message where the caller's was scrubbed: no row has it")
		}
		if c.SawDiagnostic(RowPublicMessage) || c.SawDiagnostic(RowOwnText) {
			b.fail(RowPublic, "explicit public errors are expected rejections: diagnostics must not be called for them")
		}
		if !c.SawRow(RowPublicMessage) {
			b.fail(RowPublic, "the audit row of an explicit public error must record its public message")
		}
	}
}
