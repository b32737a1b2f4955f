package mcpgo

import (
	"context"
	"encoding/json"
	"errors"

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
// error's text. So the adapter runs the kit's frame guard there
// (adapter.FrameGuard: the tools/call clients send is read once without
// allocating; any other request is decoded into the very type mcp-go will
// use, so a request that decodes there decodes there again), and answers
// one that does not with the kit's fixed message; the decoder's text goes
// to the fallback logger.

// codec is mcp-go's, for the kit's frame guard: the decoders of each
// method mcp-go decodes into a Go type (the methods of HandleMessage's
// switch), its code for a request that does not decode (-32600), and
// encoding/json's matching of keys.
var codec = adapter.FrameCodec{
	Decode:     decodeBase,
	ParamsCode: mcp.INVALID_REQUEST,
	Keys:       adapter.KeysFold,
	Params: map[string]func(adapter.Envelope) error{
		string(mcp.MethodInitialize):             decodeAs[mcp.InitializeRequest],
		string(mcp.MethodPing):                   decodeAs[mcp.PingRequest],
		string(mcp.MethodServerDiscover):         decodeAs[mcp.DiscoverRequest],
		string(mcp.MethodSubscriptionsListen):    decodeAs[mcp.SubscriptionsListenRequest],
		string(mcp.MethodSetLogLevel):            decodeAs[mcp.SetLevelRequest],
		string(mcp.MethodResourcesList):          decodeAs[mcp.ListResourcesRequest],
		string(mcp.MethodResourcesTemplatesList): decodeAs[mcp.ListResourceTemplatesRequest],
		string(mcp.MethodResourcesRead):          decodeAs[mcp.ReadResourceRequest],
		string(mcp.MethodResourcesSubscribe):     decodeAs[mcp.SubscribeRequest],
		string(mcp.MethodResourcesUnsubscribe):   decodeAs[mcp.UnsubscribeRequest],
		string(mcp.MethodPromptsList):            decodeAs[mcp.ListPromptsRequest],
		string(mcp.MethodPromptsGet):             decodeAs[mcp.GetPromptRequest],
		string(mcp.MethodToolsList):              decodeAs[mcp.ListToolsRequest],
		string(mcp.MethodToolsCall):              decodeToolsCall,
		string(mcp.MethodTasksGet):               decodeAs[mcp.GetTaskRequest],
		string(mcp.MethodTasksList):              decodeAs[mcp.ListTasksRequest],
		string(mcp.MethodTasksResult):            decodeAs[mcp.TaskResultRequest],
		string(mcp.MethodTasksCancel):            decodeAs[mcp.CancelTaskRequest],
		string(mcp.MethodCompletionComplete):     decodeAs[mcp.CompleteRequest],
	},
}

// decodeBase reads the method of a message mcp-go has decoded already (the
// hook is given no other); one whose method does not decode passes, as it
// did before the hook.
func decodeBase(message []byte) (adapter.Envelope, error) {
	var base struct {
		Method mcp.MCPMethod `json:"method"`
	}
	if json.Unmarshal(message, &base) != nil {
		return adapter.Envelope{}, nil
	}
	return adapter.Envelope{Method: string(base.Method)}, nil
}

func decodeAs[T any](e adapter.Envelope) error {
	var v T
	return json.Unmarshal(e.Message, &v)
}

// decodeToolsCall fails exactly when decoding message into an
// mcp.CallToolRequest fails, without building the arguments: every call
// passes here, and decoding them into mcp-go's map[string]any would double
// the allocations of a call (TestDecodeToolsCallAgrees holds it to
// decodeAs[mcp.CallToolRequest]). mcp-go v1.2.1's CallToolParams.UnmarshalJSON
// decodes this same shape, then the arguments into an any, which (the JSON
// being valid, as the first decode found) fails only on a number beyond
// float64's range.
func decodeToolsCall(e adapter.Envelope) error {
	var v struct {
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      *mcp.Meta       `json:"_meta,omitempty"`
			Task      *mcp.TaskParams `json:"task,omitempty"`
			mcp.MultiRoundTripParams
		} `json:"params"`
	}
	if err := json.Unmarshal(e.Message, &v); err != nil {
		return err
	}
	if !adapter.NumbersInRange(v.Params.Arguments) {
		return errNumberRange
	}
	return nil
}

// errNumberRange is decodeToolsCall's answer to arguments with a number
// beyond float64's range; only its being non-nil matters.
var errNumberRange = errors.New("a number beyond float64's range")

// addParseGuard adds to h the hook that answers a request mcp-go could not
// decode with the kit's fixed invalid-request error instead of the
// decoder's text, which the kit logs to cfg's fallback logger. A non-nil s
// limits it to requests to s.
func addParseGuard(h *server.Hooks, cfg *adapter.Config, s *server.MCPServer) {
	g := adapter.NewFrameGuard(cfg, codec)
	h.AddOnRequestInitialization(func(ctx context.Context, id any, message any) error {
		raw, ok := message.(json.RawMessage)
		if !ok || !forServer(ctx, s) {
			return nil
		}
		// mcp-go has decoded the envelope from raw: raw is valid JSON.
		if r := g.CheckDecoded(ctx, raw); r != nil {
			return r
		}
		return nil
	})
}
