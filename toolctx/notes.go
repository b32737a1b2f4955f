package toolctx

// Note is a server-side annotation of a call's result, for the audit row:
// what an interceptor did to the call that the row cannot tell from the
// outcome alone ("attempts" = "3", "cache" = "hit", "scrubbed" = the rule's
// name, "truncated_from_bytes" = "70211").
//
// Notes are kept in an unexported field of [CallResult], like its cause:
// adapters never send them and encoders never see them, so a note is never
// part of what the client receives. Even so, a note must never hold a
// secret, an argument or a raw message: it is recorded in every audit row
// and kept long.
type Note struct {
	// Key names what the note says; interceptors document theirs.
	Key string
	// Value is the note's value, short and printable.
	Value string
}

// WithNote returns a copy of r that carries one more note, after the notes r
// already has (r itself is not changed: a handler may return a shared
// result). A nil r stays nil. [Normalized] keeps the notes of the result it
// replaces, so a note added inside Normalize reaches the audit row.
func (r *CallResult) WithNote(key, value string) *CallResult {
	if r == nil {
		return nil
	}
	c := *r
	// A full slice expression: appending never writes into the notes of r
	// or of any other copy of it.
	c.notes = append(r.notes[:len(r.notes):len(r.notes)], Note{Key: key, Value: value})
	return &c
}

// Notes returns the notes of r, oldest first, or nil. The slice is shared:
// do not change it.
func (r *CallResult) Notes() []Note {
	if r == nil {
		return nil
	}
	return r.notes
}

// Note returns the value of the last note of r with the given key, and
// whether there is one.
func (r *CallResult) Note(key string) (string, bool) {
	notes := r.Notes()
	for i := len(notes) - 1; i >= 0; i-- {
		if notes[i].Key == key {
			return notes[i].Value, true
		}
	}
	return "", false
}
