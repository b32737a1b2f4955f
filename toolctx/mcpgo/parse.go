package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// mcp-go (v1.2.1, server/request_handler.go) decodes each request into its
// method's Go type before any hook or middleware sees it, and answers a
// request that does not decode (a number beyond float64's range, a params
// field of the wrong JSON type) with JSON-RPC -32600 and the message
// "unparsable tools/call request: " + the encoding/json error, which names
// Go struct fields, Go types and package-qualified type names
// ("... into Go struct field CallToolRequest.params.task of type
// mcp.TaskParams"). That text reaches the client on every transport, since
// every transport hands the raw message to MCPServer.HandleMessage. The one
// hook mcp-go runs before it decodes, OnRequestInitialization, gets the raw
// message; an error it returns is answered with the same code and the
// error's text. So the adapter decodes the request there, into the very
// type mcp-go will use (a request that decodes there decodes there again),
// and answers one that does not with a fixed message; the decoder's text
// goes to the fallback logger.

// errParams is what the client gets for a request whose params do not
// decode: mcp-go's code (-32600) with a fixed message.
var errParams = errors.New("invalid request: its params do not match the method's")

// decoders decode a request of each method mcp-go decodes into a Go type
// (the methods of HandleMessage's switch).
var decoders = map[mcp.MCPMethod]func(json.RawMessage) error{
	mcp.MethodInitialize:             decodeAs[mcp.InitializeRequest],
	mcp.MethodPing:                   decodeAs[mcp.PingRequest],
	mcp.MethodServerDiscover:         decodeAs[mcp.DiscoverRequest],
	mcp.MethodSubscriptionsListen:    decodeAs[mcp.SubscriptionsListenRequest],
	mcp.MethodSetLogLevel:            decodeAs[mcp.SetLevelRequest],
	mcp.MethodResourcesList:          decodeAs[mcp.ListResourcesRequest],
	mcp.MethodResourcesTemplatesList: decodeAs[mcp.ListResourceTemplatesRequest],
	mcp.MethodResourcesRead:          decodeAs[mcp.ReadResourceRequest],
	mcp.MethodResourcesSubscribe:     decodeAs[mcp.SubscribeRequest],
	mcp.MethodResourcesUnsubscribe:   decodeAs[mcp.UnsubscribeRequest],
	mcp.MethodPromptsList:            decodeAs[mcp.ListPromptsRequest],
	mcp.MethodPromptsGet:             decodeAs[mcp.GetPromptRequest],
	mcp.MethodToolsList:              decodeAs[mcp.ListToolsRequest],
	mcp.MethodToolsCall:              decodeToolsCall,
	mcp.MethodTasksGet:               decodeAs[mcp.GetTaskRequest],
	mcp.MethodTasksList:              decodeAs[mcp.ListTasksRequest],
	mcp.MethodTasksResult:            decodeAs[mcp.TaskResultRequest],
	mcp.MethodTasksCancel:            decodeAs[mcp.CancelTaskRequest],
	mcp.MethodCompletionComplete:     decodeAs[mcp.CompleteRequest],
}

func decodeAs[T any](message json.RawMessage) error {
	var v T
	return json.Unmarshal(message, &v)
}

// decodeToolsCall fails exactly when decoding message into an
// mcp.CallToolRequest fails, without building the arguments: every call
// passes here, and decoding them into mcp-go's map[string]any would double
// the allocations of a call (TestDecodeToolsCallAgrees holds it to
// decodeAs[mcp.CallToolRequest]). mcp-go v1.2.1's CallToolParams.UnmarshalJSON
// decodes this same shape, then the arguments into an any, which (the JSON
// being valid, as the first decode found) fails only on a number beyond
// float64's range.
func decodeToolsCall(message json.RawMessage) error {
	var v struct {
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      *mcp.Meta       `json:"_meta,omitempty"`
			Task      *mcp.TaskParams `json:"task,omitempty"`
			mcp.MultiRoundTripParams
		} `json:"params"`
	}
	if err := json.Unmarshal(message, &v); err != nil {
		return err
	}
	return numbersInRange(v.Params.Arguments)
}

// errNumberRange is numbersInRange's answer; only its being non-nil matters.
var errNumberRange = errors.New("a number beyond float64's range")

// numbersInRange reports whether a number in the valid JSON b is beyond
// float64's range, which encoding/json refuses to decode into an any.
func numbersInRange(b []byte) error {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			for j < len(b) && strings.IndexByte("+-.eE0123456789", b[j]) >= 0 {
				j++
			}
			if _, err := strconv.ParseFloat(unsafe.String(&b[i], j-i), 64); err != nil {
				return errNumberRange
			}
			i = j - 1
		}
	}
	return nil
}

// addParseGuard adds to h the hook that answers a request mcp-go could not
// decode with [errParams] instead of the decoder's text, which it logs to
// cfg's fallback logger. A non-nil s limits it to requests to s.
func addParseGuard(h *server.Hooks, cfg *adapter.Config, s *server.MCPServer) {
	h.AddOnRequestInitialization(func(ctx context.Context, id any, message any) error {
		raw, ok := message.(json.RawMessage)
		if !ok || !forServer(ctx, s) {
			return nil
		}
		if quickToolsCall(raw) {
			return nil // the shape every client sends: decodes, nothing to decode twice
		}
		var base struct {
			Method mcp.MCPMethod `json:"method"`
		}
		if json.Unmarshal(raw, &base) != nil {
			return nil // mcp-go decoded it already: not a request this hook is given
		}
		decode := decoders[base.Method]
		if decode == nil {
			return nil
		}
		err := decode(raw)
		if err == nil {
			return nil
		}
		l := cfg.Logger
		if l == nil {
			l = slog.Default()
		}
		adapter.Run(func() { // a logger that panics changes nothing
			l.WarnContext(ctx, cfg.Name+": a request's params do not decode; answered with a fixed invalid-request error",
				"method", string(base.Method), "err", err.Error())
		})
		return errParams
	})
}
