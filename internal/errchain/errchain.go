package errchain

import (
	"errors"
	"reflect"
)

// MaxDepth is how deep a walk goes at most: a real chain is a few errors
// long, and a branch deeper than this is treated as ending there (so a
// cycle in one branch of a Join does not hide a match in the next).
const MaxDepth = 100

// MaxNodes is how many errors a walk visits at most, over all branches.
const MaxNodes = 1024

// As returns the first error in err's chain that is an E (or whose As
// method sets an E), in errors.As's order: depth-first, pre-order. Unlike
// errors.As it skips a zero E (a typed nil *errs.Error, say), which holds
// nothing to read, and goes on to the next match.
func As[E error](err error) (E, bool) {
	if !Known(err) {
		return asWithin[E](err)
	}
	return AsKnown[E](err)
}

// AsKnown is [As] for an err that [Known] reports true for: it walks on the
// caller's goroutine without asking Known again, so a caller that looks for
// several targets in one chain pays for Known once.
func AsKnown[E error](err error) (E, bool) {
	w := Walker{budget: MaxNodes}
	return as[E](err, 0, &w)
}

// Walker is the state of one walk: how many more errors it may visit and,
// for a walk run by [Tracked], which method of which error it is calling.
// Its zero value visits nothing; [Tracked] hands one to its function.
type Walker struct {
	budget int
	track  *track
}

// enter notes that the walk is about to call method of err.
func (w *Walker) enter(method string, err error) {
	if w.track != nil {
		w.track.set(method, err)
	}
}

// Enter notes, for the report of a [Tracked] walk that does not return,
// that its function is about to call method (a name of the caller's, as
// "Map") of err. It does nothing on a nil w or an untracked walk.
func (w *Walker) Enter(method string, err error) {
	if w != nil {
		w.enter(method, err)
	}
}

// AsIn is [As] as part of w's walk ([Tracked]), counted against its budget
// and tracked; a nil w is [AsKnown]: err is a chain found [Known].
func AsIn[E error](w *Walker, err error) (E, bool) {
	if w == nil {
		return AsKnown[E](err)
	}
	w.budget = MaxNodes
	return as[E](err, 0, w)
}

// IsIn is [Is] as part of w's walk ([Tracked]); a nil w is [IsKnown]: err
// is a chain found [Known].
func IsIn(w *Walker, err, target error) bool {
	if w == nil {
		return IsKnown(err, target)
	}
	if err == nil || target == nil {
		return err == target
	}
	w.budget = MaxNodes
	return is(err, target, 0, w)
}

func as[E error](err error, depth int, w *Walker) (E, bool) {
	var zero E
	for ; err != nil; depth++ {
		if w.budget <= 0 || depth >= MaxDepth {
			return zero, false
		}
		w.budget--
		if e, ok := err.(E); ok && !isZero(e) {
			return e, true
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			w.enter("As", err)
			if e, ok := callAs[E](x); ok && !isZero(e) {
				return e, true
			}
		}
		w.enter("Unwrap", err)
		many, next := unwrap(err)
		if many == nil {
			err = next
			continue
		}
		for _, inner := range many {
			if e, ok := as[E](inner, depth+1, w); ok {
				return e, true
			}
		}
		return zero, false
	}
	return zero, false
}

// Is reports whether target is in err's chain, compared with == where
// both are comparable and through Is methods, in errors.Is's order.
func Is(err, target error) bool {
	if err == nil || target == nil {
		return err == target
	}
	if !Known(err) {
		return isWithin(err, target)
	}
	return IsKnown(err, target)
}

// IsKnown is [Is] for an err that [Known] reports true for (see [AsKnown]).
func IsKnown(err, target error) bool {
	if err == nil || target == nil {
		return err == target
	}
	w := Walker{budget: MaxNodes}
	return is(err, target, 0, &w)
}

func is(err, target error, depth int, w *Walker) bool {
	for ; err != nil; depth++ {
		if w.budget <= 0 || depth >= MaxDepth {
			return false
		}
		w.budget--
		if equal(err, target) {
			return true
		}
		if x, ok := err.(interface{ Is(error) bool }); ok {
			w.enter("Is", err)
			if callIs(x, target) {
				return true
			}
		}
		w.enter("Unwrap", err)
		many, next := unwrap(err)
		if many == nil {
			err = next
			continue
		}
		for _, inner := range many {
			if is(inner, target, depth+1, w) {
				return true
			}
		}
		return false
	}
	return false
}

// unwrap returns what err wraps: one error, or a non-nil list. A panic in
// the Unwrap method counts as nothing wrapped. An error with no Unwrap
// method (most of a chain's last links) costs no deferred recover.
func unwrap(err error) (many []error, next error) {
	switch x := err.(type) {
	case interface{ Unwrap() error }:
		return nil, unwrapOne(x)
	case interface{ Unwrap() []error }:
		return unwrapMany(x), nil // nil when it panicked
	}
	return nil, nil
}

func unwrapOne(x interface{ Unwrap() error }) (next error) {
	defer func() {
		if recover() != nil { // an Unwrap that panics wraps nothing (see the package doc)
			next = nil
		}
	}()
	return x.Unwrap()
}

// unwrapMany is x.Unwrap(), a nil list made empty (the walk ends there),
// or nil when the method panics (it wraps nothing).
func unwrapMany(x interface{ Unwrap() []error }) (many []error) {
	defer func() {
		if recover() != nil {
			many = nil
		}
	}()
	if many = x.Unwrap(); many == nil {
		many = []error{}
	}
	return many
}

func callAs[E error](x interface{ As(any) bool }) (e E, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			repanicRecursion(r) // an As that panics is no match
			var zero E
			e, ok = zero, false
		}
	}()
	ok = x.As(&e)
	return e, ok
}

func callIs(x interface{ Is(error) bool }, target error) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			repanicRecursion(r) // an Is that panics is no match
			ok = false
		}
	}()
	return x.Is(target)
}

// equal is err == target, which panics when both hold the same
// uncomparable dynamic type (a struct with a slice field, say): then they
// are not equal.
func equal(err, target error) bool {
	t := reflect.TypeOf(err)
	switch {
	case t != reflect.TypeOf(target):
		return false // == compares the dynamic types first
	case t == nil || t.Kind() == reflect.Pointer:
		return err == target // cannot panic: what most errors are
	}
	return equalSlow(err, target)
}

// equalSlow is equal for a dynamic type that == may panic on.
func equalSlow(err, target error) (eq bool) {
	defer func() {
		// reflect's Comparable cannot tell in advance: a struct with an
		// interface field panics only for some values.
		if recover() != nil {
			eq = false
		}
	}()
	return err == target
}

// Walk calls fn for err and each error in its chain, in errors.As's order,
// within the same bounds as As; fn returns whether to go on into what the
// error wraps. A nil err is not visited.
func Walk(err error, fn func(error) (descend bool)) {
	budget := MaxNodes
	walk(err, fn, 0, &budget)
}

func walk(err error, fn func(error) bool, depth int, budget *int) {
	for ; err != nil; depth++ {
		if *budget <= 0 || depth >= MaxDepth {
			return
		}
		*budget--
		if !fn(err) {
			return
		}
		many, next := unwrap(err)
		if many == nil {
			err = next
			continue
		}
		for _, inner := range many {
			walk(inner, fn, depth+1, budget)
		}
		return
	}
}

// isZero reports whether e is the zero E (a nil pointer, for the pointer
// types As is used with).
func isZero[E error](e E) bool {
	var zero E
	return equal(e, zero)
}

// Unwrap returns what err wraps, as a list (empty when nothing), without
// panicking: a panicking Unwrap method wraps nothing.
func Unwrap(err error) []error {
	many, next := unwrap(err)
	if many != nil {
		return many
	}
	if next != nil {
		return []error{next}
	}
	return nil
}

// errorStringType is the type of errors.New's errors, and of fmt.Errorf's
// without %w.
var errorStringType = reflect.TypeOf(errors.New(""))

// IsErrorString reports whether err has the type errors.New makes (which
// fmt.Errorf makes too when it wraps nothing): a text and nothing else, so
// rendering it runs no code of anyone's.
func IsErrorString(err error) bool {
	return err != nil && reflect.TypeOf(err) == errorStringType
}
