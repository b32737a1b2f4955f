package mcpsdk

// growStack grows the calling goroutine's stack to at least 16 KB, now,
// while the stack is shallow. serve calls it first.
//
// The go-sdk runs every request on a new goroutine, which starts with a
// small stack; a tools/call then grows it deep inside the SDK (argument
// decoding, schema validation), and each doubling copies the whole stack in
// use and adjusts every frame on it. The adapter's and the chain's frames
// sit between the SDK's dispatcher and the tool, so they make those copies
// larger and can add a doubling. Growing once at the adapter's entry, with
// a few KB in use, costs one small copy (and zeroing 8 KB, about 100 ns)
// and spares the deep ones — the bare SDK pays them all.
//
// Measured with `go test ./bench -run '^$' -bench 'Interleaved/sdk'
// -benchtime 1000x -count 1`, eight counts each, toolmw / bare on
// 2026-11-30: in-memory 1.046 without it and 0.994 with it, streamable HTTP
// 1.029 and 0.975; growing to 32 or 64 KB helped less. (mcp-go runs a call
// on a goroutine whose stack is already grown — the caller's in process, the
// connection's over HTTP — and gained nothing from it, so its adapter does
// not call it.)
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
