package mcpsdk

import (
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/toolctx"
)

// MiddlewareWithoutSchemaCache is Middleware without the adapter's cache of
// compiled input schemas, for tests and benchmarks that compare with it.
func MiddlewareWithoutSchemaCache(m toolctx.Middleware, opts ...Option) mcp.Middleware {
	return middleware(m, false, mustConfig("Middleware", opts))
}

// InMemoryPipe is the pipe under an *mcp.InMemoryTransport, for tests that
// speak raw bytes on the client's end.
func InMemoryPipe(t *mcp.InMemoryTransport) (io.ReadWriteCloser, bool) { return inMemoryPipe(t) }
