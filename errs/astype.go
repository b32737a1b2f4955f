package errs

// asType is errors.As for a concrete error type E, without reflection and
// without allocating: errors.As takes its target as an `any`, which makes
// the target escape to the heap on every call, and Normalize runs on every
// failed tool call. The traversal is errors.As's: depth-first, pre-order,
// through Unwrap() error and Unwrap() []error, honouring As methods.
func asType[E error](err error) (E, bool) {
	var zero E
	for err != nil {
		if e, ok := err.(E); ok {
			return e, true
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			var e E
			if x.As(&e) {
				return e, true
			}
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range x.Unwrap() {
				if e, ok := asType[E](inner); ok {
					return e, true
				}
			}
			return zero, false
		default:
			return zero, false
		}
	}
	return zero, false
}
