// Command chain composes a production chain from toolmw's library
// interceptors: the guards (argument size, scopes, rate, concurrency), the
// result shapers (size limit, cache, secret scrubbing), retry and timeout,
// each selected per tool with middleware.When where it applies to some
// tools only. It runs a go-sdk server and client in memory and prints what
// each call returned, next to the audit row the server kept.
//
//	go run ./examples/chain
package main
