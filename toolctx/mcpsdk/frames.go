package mcpsdk

import (
	"bytes"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// go-sdk (v1.8.0) decodes each message twice before any middleware of its
// own runs: the envelope (jsonrpc.DecodeMessage; on stdio and in memory a
// failure there is a read error, which closes the connection for every
// call on it; the streamable HTTP handler answers it with 400 and
// "malformed payload: " + the decoder's text), then the params into the
// method's Go type (mcp/shared.go, handleReceive: a failure is answered as
// -32602 "handling 'tools/call': invalid params: unmarshaling \"...\" into a
// *mcp.CallToolParamsRaw: json: cannot unmarshal ..."; initialize's as code
// 0). Its decoder is segmentio/encoding/json with keys matched exactly and
// nesting bounded at 1000. The codec below decides as it does: the
// envelope with the SDK's own jsonrpc.DecodeMessage, the params with the
// same decoder and flags into the very types the SDK's methods take
// (serverMethodInfos in mcp/server.go).

// frameCodec is go-sdk's, for adapter.NewFrameGuard.
var frameCodec = adapter.FrameCodec{
	Decode:     decodeEnvelope,
	ParamsCode: jsonrpc.CodeInvalidParams,
	Keys:       adapter.KeysExact,
	Params: map[string]func(adapter.Envelope) error{
		"completion/complete":      paramsAs[mcp.CompleteParams],
		"server/discover":          paramsAs[mcp.DiscoverParams],
		"initialize":               paramsAs[initializeParams],
		"ping":                     paramsAs[mcp.PingParams],
		"prompts/list":             paramsAs[mcp.ListPromptsParams],
		"prompts/get":              paramsAs[mcp.GetPromptParams],
		"tools/list":               paramsAs[mcp.ListToolsParams],
		methodCallTool:             paramsAs[mcp.CallToolParamsRaw],
		"resources/list":           paramsAs[mcp.ListResourcesParams],
		"resources/templates/list": paramsAs[mcp.ListResourceTemplatesParams],
		"resources/read":           paramsAs[mcp.ReadResourceParams],
		//lint:ignore SA1019 logging is deprecated in protocol 2026-07-28, still served and decoded
		"logging/setLevel":          paramsAs[mcp.SetLoggingLevelParams],
		"resources/subscribe":       paramsAs[mcp.SubscribeParams],
		"subscriptions/listen":      paramsAs[mcp.SubscriptionsListenParams],
		"resources/unsubscribe":     paramsAs[mcp.UnsubscribeParams],
		"notifications/cancelled":   paramsAs[mcp.CancelledParams],
		"notifications/initialized": paramsAs[mcp.InitializedParams],
		//lint:ignore SA1019 roots are deprecated in protocol 2026-07-28, still served and decoded
		"notifications/roots/list_changed": paramsAs[mcp.RootsListChangedParams],
		"notifications/progress":           paramsAs[mcp.ProgressNotificationParams],
	},
}

// initializeParams is the shape go-sdk decodes an initialize's params into
// (its unexported initializeParamsV2: "roots" a pointer, for #607).
type initializeParams struct {
	mcp.InitializeParams
	Capabilities *struct {
		mcp.ClientCapabilities
		//lint:ignore SA1019 roots are deprecated in protocol 2026-07-28, still decoded by the SDK
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	} `json:"capabilities"`
}

// decodeEnvelope is the SDK's own decoding of a message.
func decodeEnvelope(message []byte) (adapter.Envelope, error) {
	msg, err := jsonrpc.DecodeMessage(message)
	if err != nil {
		return adapter.Envelope{}, err
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return adapter.Envelope{}, nil // a response to the server's own request
	}
	e := adapter.Envelope{Method: req.Method, Params: req.Params}
	if req.ID.IsValid() {
		id, ok := adapter.AppendJSONID(nil, req.ID.Raw())
		if !ok {
			return adapter.Envelope{}, errors.New("a request id of an unknown type")
		}
		e.ID = id
	}
	return e, nil
}

// paramsAs decodes the params as go-sdk's unmarshalParams does: into a *T,
// with segmentio's decoder, keys matched exactly; absent params decode.
func paramsAs[T any](e adapter.Envelope) error {
	if e.Params == nil {
		return nil
	}
	var p *T
	dec := segjson.NewDecoder(bytes.NewReader(e.Params))
	dec.DontMatchCaseInsensitiveStructFields()
	return dec.Decode(&p)
}

// newFrameGuard is the frame guard of cfg's adapter.
func newFrameGuard(cfg *adapter.Config) *adapter.FrameGuard {
	return adapter.NewFrameGuard(cfg, frameCodec)
}
