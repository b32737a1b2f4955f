package mcpgo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/internal/hostileframes"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// TestDecodeToolsCallAgrees holds the allocation-light tools/call check to
// what mcp-go itself does: it fails exactly when decoding into an
// mcp.CallToolRequest fails.
func TestDecodeToolsCallAgrees(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1e999999}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"s":"1e999999 \" 1e999999","n":-1e-999999}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1,2,{"a":[-1e400]}]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":"text"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"str"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1e999999}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{"ttl":"x"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","inputResponses":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","requestState":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a\\"b":1e308,"c":"\\\\"}}}`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		frames = append(frames, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":%s}}`, hostileframes.RandomJSON(r, 3)))
	}
	for _, f := range frames {
		var want mcp.CallToolRequest
		wantErr := json.Unmarshal([]byte(f), &want)
		got := decodeToolsCall(adapter.Envelope{Message: []byte(f)})
		assert.Equal(t, wantErr != nil, got != nil, "frame %s: mcp-go's decode says %v, the check says %v", f, wantErr, got)
	}
}

// TestQuickToolsCallIsSafe: the guard passes only what mcp-go decodes,
// passes what clients send, and reads that without allocating (the kit's
// fast path; anything else is decoded).
func TestQuickToolsCallIsSafe(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1e999999}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na\u006de":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","para\u006ds":{"name":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","PARAMS":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":-1e400}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"str"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"\u017fname":5}}`,
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		frames = append(frames, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%s,"arguments":%s,"_meta":%s}}`,
			[]string{`"echo"`, `null`, `5`, `[]`}[r.IntN(4)], hostileframes.RandomJSON(r, 3), []string{`null`, `{}`, `"x"`, hostileframes.RandomJSON(r, 2)}[r.IntN(4)]))
	}
	g := adapter.NewFrameGuard(&adapter.Config{Logger: slog.New(slog.DiscardHandler)}, codec)
	ctx := context.Background()
	for _, f := range frames {
		var req mcp.CallToolRequest
		if g.CheckMessage(ctx, []byte(f)) == nil {
			assert.NoError(t, json.Unmarshal([]byte(f), &req), "the guard passed %s, which mcp-go does not decode", f)
		}
		// What the hook calls: every frame here is valid JSON, as every
		// message mcp-go hands its hook is.
		if g.CheckDecoded(ctx, []byte(f)) == nil {
			assert.NoError(t, json.Unmarshal([]byte(f), &req), "CheckDecoded passed %s, which mcp-go does not decode", f)
		}
	}
	// Around float64's largest (about 1.8e308, 309 digits): a number
	// without an exponent of up to 308 digits is in range unparsed, any
	// longer one is parsed.
	nines := func(n int) string { return strings.Repeat("9", n) }
	withArg := func(num string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":` + num + `}}}`
	}
	for num, ok := range map[string]bool{
		nines(308): true, "-" + nines(308): true, "1" + strings.Repeat("0", 308): true, nines(307) + ".9": true,
		nines(309): false, "-" + nines(309): false, nines(309) + ".5": false, "2" + strings.Repeat("0", 308): false,
		"1e308": true, "1e309": false, "-1.5E+309": false, "1e-400": true,
	} {
		f := []byte(withArg(num))
		var req mcp.CallToolRequest
		assert.Equal(t, ok, json.Unmarshal(f, &req) == nil, "mcp-go decodes %s", num)
		assert.Equal(t, ok, g.CheckDecoded(ctx, f) == nil, "CheckDecoded passes %s", num)
		assert.Equal(t, ok, g.CheckMessage(ctx, f) == nil, "CheckMessage passes %s", num)
	}
	typical := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello","n":3,"ok":true,"list":[1.5,null]},"_meta":{"progressToken":"p1"}}}`)
	assert.Nil(t, g.CheckMessage(ctx, typical), "the shape clients send passes")
	assert.Nil(t, g.CheckDecoded(ctx, typical), "the shape clients send passes CheckDecoded")
	if !raceEnabled {
		assert.Zero(t, testing.AllocsPerRun(1000, func() { g.CheckMessage(ctx, typical) }), "and is read without allocating")
		assert.Zero(t, testing.AllocsPerRun(1000, func() { g.CheckDecoded(ctx, typical) }), "and is read without allocating by CheckDecoded")
	}
}

// BenchmarkGuardToolsCall is the frame guard's check of the tools/call
// mcp-go's own client sends (v1.2.1, in process: its _meta names the
// protocol version and the client's capabilities), which every call pays.
//
//	go test -run '^$' -bench GuardToolsCall ./toolctx/mcpgo/
func BenchmarkGuardToolsCall(b *testing.B) {
	g := adapter.NewFrameGuard(&adapter.Config{Logger: slog.New(slog.DiscardHandler)}, codec)
	ctx := context.Background()
	f := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"q":"hello"},"name":"echo"}}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if g.CheckDecoded(ctx, f) != nil {
			b.Fatal("the guard refused the frame mcp-go's client sends")
		}
	}
}
