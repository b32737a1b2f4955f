package errs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolmw/toolmw/errs"
)

// FuzzNormalize builds an error from a random message, a random code and a
// random wrapping shape, and checks Normalize's invariants: it never panics,
// its code is always valid, and the raw text of a scrubbed error never
// reaches the public message.
func FuzzNormalize(f *testing.F) {
	f.Add("connection refused: postgres://admin:hunter2@db", "not_found", "public message", uint8(0))
	f.Add("boom", "internal", "", uint8(1))
	f.Add("", "", "", uint8(2))
	f.Add("x", "bogus_code", "m", uint8(3))
	f.Add("secret", "timeout", "too slow", uint8(4))
	f.Add("secret", "canceled", "", uint8(5))
	f.Add("secret", "permission_denied", "no", uint8(6))
	f.Add("secret", "invalid_arguments", "bad", uint8(7))
	f.Add("secret", "unknown_tool", "", uint8(8))
	f.Add("\x00\xff", "rate_limited", "\u2028", uint8(9))
	f.Fuzz(func(t *testing.T, raw, code, message string, shape uint8) {
		base := errors.New(raw)
		var (
			err    error
			public bool // the error's public text is the explicit message
		)
		switch shape % 10 {
		case 0:
			err = base
		case 1:
			err = fmt.Errorf("wrap: %w", base)
		case 2:
			err = errors.Join(base, errors.New("other "+raw))
		case 3:
			err = errs.New(errs.Code(code), message).WithCause(base)
			public = true
		case 4:
			err = fmt.Errorf("%s: %w", raw, errs.New(errs.Code(code), message).WithCause(base))
			public = true
		case 5:
			err = errs.NewPanicError(raw)
		case 6:
			err = errs.NewPanicError(errs.New(errs.Code(code), message))
		case 7:
			err = fmt.Errorf("%s: %w", raw, context.Canceled)
		case 8:
			err = errors.Join(base, context.DeadlineExceeded)
		case 9:
			err = errors.Join(base, errs.NewPanicError(base), errs.New(errs.Code(code), message))
		}
		n := errs.Normalizer{}
		if shape >= 128 {
			n.GenericMessage = "custom generic"
			n.Map = func(e error) *errs.Error {
				if strings.HasPrefix(e.Error(), "wrap:") {
					return errs.New(errs.Code(code), message)
				}
				return nil
			}
		}
		pub, scrubbed := n.Normalize(err)
		if !pub.Code.Valid() {
			t.Fatalf("code %q is not valid", pub.Code)
		}
		if pub.Message == "" {
			t.Fatalf("empty public message for code %q", pub.Code)
		}
		if scrubbed {
			if pub.Code != errs.CodeInternal {
				t.Fatalf("a scrubbed error has code %q, want internal", pub.Code)
			}
			want := errs.GenericMessage
			if n.GenericMessage != "" {
				want = n.GenericMessage
			}
			if pub.Message != want {
				t.Fatalf("a scrubbed error has message %q, want the generic one", pub.Message)
			}
			if pub.Detail != nil {
				t.Fatalf("a scrubbed error has detail %v", pub.Detail)
			}
		}
		// The raw text may reach the public message only when the user
		// put it in an explicit message (or it is a substring of one of
		// the fixed messages).
		if raw != "" && strings.Contains(pub.Message, raw) {
			allowed := (public || shape >= 128) && strings.Contains(message, raw) ||
				strings.Contains(errs.GenericMessage, raw) || strings.Contains("custom generic", raw) ||
				strings.Contains(pub.Code.DefaultMessage(), raw)
			if !allowed {
				t.Fatalf("raw text %q leaked into public message %q (shape %d)", raw, pub.Message, shape)
			}
		}
		if shape%10 == 5 || shape%10 == 6 || shape%10 == 9 {
			if !scrubbed {
				t.Fatalf("a panic must be scrubbed (shape %d)", shape)
			}
		}
	})
}
