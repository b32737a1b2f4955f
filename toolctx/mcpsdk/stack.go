package mcpsdk

// growStack grows the calling goroutine's stack to at least 16 KB, now,
// while the stack is shallow. The coroutine the adapter runs each call's
// chain on (see call.run) calls it first.
//
// A new coroutine starts with a small stack; a tools/call then grows it
// deep inside the SDK (argument decoding, schema validation) and the
// chain, and each doubling copies the whole stack in use and adjusts every
// frame on it. Growing once at the start, with almost nothing in use,
// costs one small copy and spares the deep ones.
//
// It pays end to end: toolmw / bare on go-sdk in-memory was 0.989-1.043
// with it and 1.078-1.110 without it, five alternating runs each on
// 2026-12-01 of `go test ./bench -run '^$' -bench
// 'Interleaved/(sdk-in-memory|mcpgo-in)' -benchtime 1000x` (mcp-go
// in-process, with reserveStack there: 1.063-1.093 with, 1.131-1.162
// without).
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
