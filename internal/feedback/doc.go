// Package feedback phrases invalid-arguments feedback as a sentence about
// the argument at fault, "b: expected a number, got null" or
// "a: number out of range", whichever validator found the problem: the JSON
// Schema validators of both SDKs (go-sdk's google/jsonschema-go, mcp-go's
// santhosh-tekuri/jsonschema) and encoding/json, which toolmw's typed
// decoder uses. The adapters and toolctx phrase their feedback here so that
// a model reads the same words whichever SDK serves it.
//
// What a validator found is read into [Problem]s (path, rule, expected,
// got), and the message ([Message]) and the public detail ([Detail]) are
// built from them alone: from encoding/json's structured errors, and from
// the two validators' texts by taking only the parts whose shape is known
// (a schema location, a keyword, a JSON kind, a limit), each checked
// against what it can be. None of a validator's own words reach the client
// (they print Go values, Go type names, package paths); a text that is not
// recognised is a problem of rule "schema". The feedback describes the
// caller's own arguments and the published schema, so it is public.
package feedback
