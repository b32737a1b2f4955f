package mcpsdk

import (
	"context"
	"errors"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx/adapter"
)

// Where did a failure arise? Only the SDK's own refusals before a handler
// is entered (an unknown tool, a typed tool's input validation) reach the
// client as meant; they are told by facts (the tool table, the adapter's
// own validation), never by an error's type, code or text. Why: see
// docs/adapters/mcpsdk.md, "Where a failure arose".

const (
	methodListTools = "tools/list"
	maxToolPages    = 1000 // bounds the pages lookupTool reads
)

// lookupTool finds the tool called name in the server's tool table through
// tools/list, its only exported reader. read is false when the table could
// not be read; tool is nil when it has no such tool.
func (t terminal) lookupTool(ctx context.Context, sreq *mcp.CallToolRequest, name string) (tool *mcp.Tool, read bool) {
	defer func() {
		// A tools/list that panics means the table cannot be read: the
		// failure keeps its own cause, not a panic of the call's.
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
	// The SDK's input-validation error has errors.New's type.
	if reflect.TypeOf(ge) != reflect.TypeOf(errors.New("")) {
		return nil, false
	}
	tool, _ := t.lookupTool(ctx, sreq, sreq.Params.Name)
	if tool == nil || tool.InputSchema == nil {
		return nil, false
	}
	in, err := inputSchema(t.schemas, tool)
	if err != nil {
		return nil, false
	}
	if _, verr := applyInputSchema(sreq.Params.Arguments, in, true); verr != nil {
		return invalidArguments(verr), true
	}
	return nil, false
}

// urlElicitationRequired returns the protocol error the client gets for a
// handler's well-formed URL elicitation (mcp.URLElicitationRequiredError),
// rebuilt from the protocol's fields under the SDK's fixed message; see
// adapter.URLElicitations.
func urlElicitationRequired(err error) (*protocolError, bool) {
	we, ok := err.(*jsonrpc.Error)
	if !ok || we.Code != mcp.CodeURLElicitationRequired {
		return nil, false
	}
	data, ok := adapter.URLElicitations(we.Data)
	if !ok {
		return nil, false
	}
	const msg = "URL elicitation required"
	return &protocolError{pub: errs.FailedPrecondition(msg),
		wire: &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Message: msg, Data: data}}, true
}
