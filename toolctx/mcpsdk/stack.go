package mcpsdk

// growStack grows the calling goroutine's stack to at least 16 KB, now,
// while the stack is shallow. The goroutine the adapter runs each call's
// chain on (see call.run) calls it first.
//
// A new goroutine starts with a small stack; a tools/call then grows it
// deep inside the SDK (argument decoding, schema validation) and the
// chain, and each doubling copies the whole stack in use and adjusts every
// frame on it. Growing once at the goroutine's start, with almost nothing
// in use, costs one small copy and spares the deep ones.
//
// Measured with `go test ./toolctx/mcpsdk -run '^$' -bench
// AdapterOverhead/toolmw -benchmem -count 3 -benchtime 100000x` on
// 2026-12-01 (load ~6 on 2 cores): the adapter and chain cost 4.3-5.6 µs
// per call without it and 2.0-2.6 µs with it (0.35 µs before the chain had
// a goroutine of its own), against ~350 µs for a whole in-memory call.
// (Before the chain had its own goroutine, growStack ran at the adapter's
// entry on the SDK's goroutine: `go test ./bench -run '^$' -bench
// 'Interleaved/sdk' -benchtime 1000x -count 1`, eight counts each, toolmw /
// bare on 2026-11-30: in-memory 1.046 without it and 0.994 with it.)
//
//go:noinline
func growStack() {
	var frame [8 << 10]byte
	keep(frame[:])
}

// keep is a call the compiler cannot see through, so that growStack's frame
// is really allocated.
//
//go:noinline
func keep([]byte) {}
