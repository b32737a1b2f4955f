package adapter

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

var (
	callIDPrefix  = newCallIDPrefix()
	callIDCounter atomic.Uint64
)

func newCallIDPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	return hex.EncodeToString(b[:]) + "-"
}

// NewCallID returns a correlation id for [toolctx.Request.CallID], unique
// to this process run and, with overwhelming probability, across runs: a
// random per-process prefix and a counter. Adapters use it where the SDK
// does not expose the JSON-RPC id.
func NewCallID() string {
	var b [len("0123456789ab-") + 20]byte // the prefix and the longest uint64
	return string(strconv.AppendUint(append(b[:0], callIDPrefix...), callIDCounter.Add(1), 10))
}
