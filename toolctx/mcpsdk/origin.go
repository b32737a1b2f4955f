package mcpsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
)

// Where did a failure arise? Only the SDK's own refusals that come before
// any handler is entered may reach the client as they are meant: the
// unknown-tool protocol error (mcp/server.go, callTool) and a typed tool's
// input-validation feedback (mcp/server.go, toolForErr). Everything a
// handler or a middleware returns is its own failure, whatever its type,
// code or text says, and is scrubbed.
//
// The SDK exposes nothing that marks a handler's entry: a typed tool's
// wrapper validates the arguments and calls the user's function with the
// same context and request, and returns the result of either in the same
// shape; a handler may return a *jsonrpc.Error with any code and text. What
// it does expose is its tool table, through its own tools/list method. So
// the adapter decides from facts, never from the error's text:
//
//   - unknown tool: the tool is not in the table. The client then gets a
//     protocol error the adapter builds from the name it sent, never the
//     error that came back (a handler's, if the table changed meanwhile).
//   - input validation: validating the arguments the SDK was given against
//     the tool's input schema, as the SDK does (same schema library, same
//     steps), fails. The SDK runs that validation before a typed tool's
//     function, so that function was not entered. The client gets the
//     adapter's own validation message of those arguments (it describes
//     only what the caller sent), never the error that came back.
//
// Both checks run only on a failure that could be the SDK's (a
// *jsonrpc.Error with the invalid-params code; an isError result whose
// GetError has the plain type that fmt.Errorf without %w makes), so a
// successful call pays nothing. If the table cannot be read (a middleware
// inside the adapter's refuses tools/list, say), the failure is scrubbed:
// the safe side. A tool registered with Server.AddTool is not validated by
// the SDK; if such a handler is called with arguments its own schema
// rejects and returns an isError result with GetError, that is reported as
// invalid arguments (the adapter's message; the handler's error stays the
// cause).

// methodListTools is the SDK method that reads the tool table.
const methodListTools = "tools/list"

// maxToolPages bounds the pages lookupTool reads.
const maxToolPages = 1000

// lookupTool finds the tool called name in the server's tool table through
// the SDK's tools/list method, the table's only exported reader. read is
// false when the table could not be read; tool is nil when it has no such
// tool.
func (t terminal) lookupTool(ctx context.Context, sreq *mcp.CallToolRequest, name string) (tool *mcp.Tool, read bool) {
	defer func() {
		// Needed here, not left to the terminal's adapter.Native: a
		// tools/list that panics (a middleware inside the adapter's) means
		// the table cannot be read, and the failure keeps its own cause,
		// scrubbed; it does not become a panic of the call.
		if recover() != nil {
			tool, read = nil, false
		}
	}()
	params := &mcp.ListToolsParams{}
	for range maxToolPages {
		res, err := t.next(ctx, methodListTools, &mcp.ListToolsRequest{Session: sreq.Session, Params: params, Extra: sreq.Extra})
		lr, _ := res.(*mcp.ListToolsResult)
		if err != nil || lr == nil {
			return nil, false
		}
		for _, tl := range lr.Tools {
			if tl != nil && tl.Name == name {
				return tl, true
			}
		}
		if lr.NextCursor == "" {
			return nil, true
		}
		params = &mcp.ListToolsParams{Cursor: lr.NextCursor}
	}
	return nil, false
}

// unknownTool reports whether err is the SDK's refusal of a tool that is
// not in its table, and returns the protocol error the client gets then.
func (t terminal) unknownTool(ctx context.Context, sreq *mcp.CallToolRequest, err error) (*protocolError, bool) {
	we, ok := err.(*jsonrpc.Error)
	if !ok || we.Code != jsonrpc.CodeInvalidParams {
		return nil, false
	}
	name := sreq.Params.Name
	if tool, read := t.lookupTool(ctx, sreq, name); !read || tool != nil {
		return nil, false
	}
	return unknownTool(name), true
}

// inputValidation reports whether ge, the error of an isError result, is
// the SDK's refusal of the arguments before the tool's function ran, and
// returns the feedback the client gets then.
func (t terminal) inputValidation(ctx context.Context, sreq *mcp.CallToolRequest, ge error) (*errs.Error, bool) {
	// The SDK's input-validation error has the type of errors.New's (and of
	// fmt.Errorf's without %w); only a failure pays for this.
	if reflect.TypeOf(ge) != reflect.TypeOf(errors.New("")) {
		return nil, false
	}
	tool, _ := t.lookupTool(ctx, sreq, sreq.Params.Name)
	if tool == nil || tool.InputSchema == nil {
		return nil, false
	}
	in, err := t.schemas.inputSchema(tool)
	if err != nil {
		return nil, false
	}
	verr := validateArguments(sreq.Params.Arguments, in)
	if verr == nil {
		return nil, false
	}
	return invalidArguments(verr), true
}

// validateArguments does what the SDK does to a typed tool's arguments
// before it calls the tool (mcp/tool.go, applySchema): decode them into an
// object, apply the schema's defaults, validate.
func validateArguments(raw json.RawMessage, in *jsonschema.Resolved) error {
	v := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return decodeError{raw: raw, err: err}
		}
	}
	var inst any = v
	if err := in.ApplyDefaults(&inst); err != nil {
		return fmt.Errorf("applying schema defaults:\n%w", err)
	}
	return in.Validate(&inst)
}

// urlElicitation is one URL-mode elicitation as the protocol defines it.
type urlElicitation struct {
	Mode          string `json:"mode"`
	Message       string `json:"message"`
	URL           string `json:"url"`
	ElicitationID string `json:"elicitationId,omitempty"`
}

// urlElicitationRequired returns the protocol error the client gets for a
// handler's URL-elicitation-required error (mcp.URLElicitationRequiredError),
// a flow of the protocol a handler starts on purpose: the client must see
// the elicitations to complete them. What passes is rebuilt from the
// protocol's fields only (mode "url", message, url, elicitationId), under
// the SDK's fixed message: the handler's own message and any other field
// of its data are dropped. The elicitation's message and URL are meant for
// the user, as an [errs.Error]'s public message is. Data that does not
// decode to at least one well-formed URL elicitation makes the error an
// ordinary (scrubbed) failure.
func urlElicitationRequired(err error) (*protocolError, bool) {
	we, ok := err.(*jsonrpc.Error)
	if !ok || we.Code != mcp.CodeURLElicitationRequired {
		return nil, false
	}
	var data struct {
		Elicitations []urlElicitation `json:"elicitations"`
	}
	if json.Unmarshal(we.Data, &data) != nil || len(data.Elicitations) == 0 {
		return nil, false
	}
	for _, e := range data.Elicitations {
		u, perr := url.Parse(e.URL)
		if e.Mode != "url" || perr != nil || !u.IsAbs() {
			return nil, false
		}
	}
	b, merr := json.Marshal(data)
	if merr != nil {
		return nil, false
	}
	const msg = "URL elicitation required"
	return &protocolError{pub: errs.FailedPrecondition(msg),
		wire: &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: msg, Data: b}}, true
}
