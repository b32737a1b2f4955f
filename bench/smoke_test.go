package bench

import (
	"context"
	"testing"

	"github.com/toolmw/toolmw/audit"
	"github.com/toolmw/toolmw/toolctx"
)

// TestSmoke checks the benchmarks' fixtures with one call each, so that
// `go test ./bench` (and -race in CI) catches a broken fixture without
// running a benchmark.
func TestSmoke(t *testing.T) {
	for _, way := range append([]string{wayToolmwSync}, ways...) {
		sdkCall(t, sdkInMemory(t, sdkServer(t, way, toolctx.TransportInMemory)), echoParams())
		sdkCall(t, sdkHTTP(t, sdkServer(t, way, toolctx.TransportStreamableHTTP), 1)[0], echoParams())
	}
	for _, way := range append([]string{wayToolmwSync}, mcpgoWays...) {
		mcpgoCall(t, mcpgoInProcess(t, mcpgoServer(t, way, mcpgoEcho)), mcpgoRequest(map[string]any{"q": "hello"}))
		mcpgoCall(t, mcpgoHTTP(t, mcpgoServer(t, way, mcpgoEcho), 1)[0], mcpgoRequest(map[string]any{"q": "hello"}))
	}
	for _, url := range []string{demoServer(t), bareGreetServer(t)} {
		for _, cs := range sdkConnect(t, url, 2) {
			sdkCall(t, cs, greetParams())
		}
	}
	var rows int
	e := audit.EmitterFunc(func(context.Context, audit.Record) { rows++ })
	for _, h := range []toolctx.Handler{okHandler, pubHandler, rawHandler, panicHandle} {
		chained, err := fullChain(e).Then(h)
		if err != nil {
			t.Fatal(err)
		}
		if res := chained.CallTool(context.Background(), chainReq); res == nil {
			t.Fatal("nil result")
		}
	}
	if rows != 4 {
		t.Fatalf("audit rows: %d, want 4", rows)
	}
}
