package main

//lint:file-ignore SA1019 sampling is deprecated as of protocol 2026-07-28 (SEP-2577) but still a multi-round-trip input request the proxy forwards.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/audit"
)

// mrtrServer is an upstream whose tools ask their client for input the
// 2026-07-28 way (multi round-trip requests, SEP-2322): the first round of
// a call answers input-required, with the request in inputRequests and a
// requestState; the client retries the call with its answer in
// inputResponses and the state echoed, and the last round answers what
// the client said and the protocol version the upstream's session speaks.
// confirm asks for an elicitation, summarize for a sampling, both for an
// elicitation and then, in a second input-required round, a sampling; the
// prompt greeting and the resource mrtrResource ask for an elicitation, the
// tool roots for the client's roots.
func mrtrServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1.0.0"}, nil)
	object := map[string]any{"type": "object"}
	answer := func(req *mcp.CallToolRequest, said string) *mcp.CallToolResult {
		version := "none"
		if p := req.Session.InitializeParams(); p != nil {
			version = p.ProtocolVersion
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: said + " protocol=" + version}}}
	}
	s.AddTool(&mcp.Tool{Name: "confirm", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{RequestState: "confirm-state",
				InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "who are you?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}}}}, nil
		}
		el, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
		if !ok || req.Params.RequestState != "confirm-state" {
			return nil, fmt.Errorf("retried with %#v and state %q", req.Params.InputResponses, req.Params.RequestState)
		}
		return answer(req, fmt.Sprintf("elicited=%v", el.Content["who"])), nil
	})
	s.AddTool(&mcp.Tool{Name: "summarize", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{RequestState: "summarize-state",
				InputRequests: mcp.InputRequestMap{"llm": &mcp.CreateMessageParams{MaxTokens: 10,
					Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "who are you?"}}}}}}, nil
		}
		msg, ok := req.Params.InputResponses["llm"].(*mcp.CreateMessageWithToolsResult)
		if !ok || req.Params.RequestState != "summarize-state" || len(msg.Content) != 1 {
			return nil, fmt.Errorf("retried with %#v and state %q", req.Params.InputResponses, req.Params.RequestState)
		}
		tc, _ := msg.Content[0].(*mcp.TextContent)
		if tc == nil {
			return nil, fmt.Errorf("sampled %#v", msg.Content[0])
		}
		return answer(req, "sampled="+tc.Text), nil
	})
	s.AddTool(&mcp.Tool{Name: "both", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		switch in := req.Params.InputResponses; {
		case len(in) == 0:
			return &mcp.CallToolResult{RequestState: "both-1", InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "who are you?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}}}}, nil
		case req.Params.RequestState == "both-1":
			el, ok := in["who"].(*mcp.ElicitResult)
			if !ok {
				return nil, fmt.Errorf("round 2 with %#v", in)
			}
			return &mcp.CallToolResult{RequestState: fmt.Sprintf("both-2 elicited=%v", el.Content["who"]),
				InputRequests: mcp.InputRequestMap{"llm": &mcp.CreateMessageParams{MaxTokens: 10,
					Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "who are you?"}}}}}}, nil
		default:
			msg, ok := in["llm"].(*mcp.CreateMessageWithToolsResult)
			elicited, found := strings.CutPrefix(req.Params.RequestState, "both-2 ")
			if !ok || !found || len(msg.Content) != 1 {
				return nil, fmt.Errorf("round 3 with %#v and state %q", in, req.Params.RequestState)
			}
			tc, _ := msg.Content[0].(*mcp.TextContent)
			if tc == nil {
				return nil, fmt.Errorf("sampled %#v", msg.Content[0])
			}
			return answer(req, elicited+" sampled="+tc.Text), nil
		}
	})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{RequestState: "roots-state", InputRequests: mcp.InputRequestMap{"where": &mcp.ListRootsParams{}}}, nil
		}
		roots, ok := req.Params.InputResponses["where"].(*mcp.ListRootsResult)
		if !ok || req.Params.RequestState != "roots-state" {
			return nil, fmt.Errorf("retried with %#v and state %q", req.Params.InputResponses, req.Params.RequestState)
		}
		return answer(req, "roots="+rootURIs(roots.Roots)), nil
	})
	s.AddResource(&mcp.Resource{URI: mrtrResource, Name: "whoami"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.ReadResourceResult{RequestState: "whoami-state",
				InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "who are you?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}}}}, nil
		}
		el, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
		if !ok || req.Params.RequestState != "whoami-state" {
			return nil, fmt.Errorf("retried with %#v and state %q", req.Params.InputResponses, req.Params.RequestState)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: mrtrResource, MIMEType: "text/plain",
			Text: fmt.Sprintf("you are %v", el.Content["who"])}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greeting"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.GetPromptResult{RequestState: "greeting-state",
				InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Message: "who are you?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}}}}, nil
		}
		el, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
		if !ok || req.Params.RequestState != "greeting-state" {
			return nil, fmt.Errorf("retried with %#v and state %q", req.Params.InputResponses, req.Params.RequestState)
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
			Content: &mcp.TextContent{Text: fmt.Sprintf("hello %v", el.Content["who"])}}}}, nil
	})
	return s
}

// mrtrResource is the mrtr upstream's resource, whose read asks for an
// elicitation.
const mrtrResource = "mrtr://whoami"

// clientRoot is the root the tests' clients have.
const clientRoot = "file:///client/project"

// rootURIs is the roots' URIs, comma-separated.
func rootURIs(roots []*mcp.Root) string {
	var uris []string
	for _, r := range roots {
		uris = append(uris, r.URI)
	}
	return strings.Join(uris, ",")
}

// mrtrHandlers sets the client's sampling and elicitation handlers, which
// answer with the name "client" and count what they were asked.
func mrtrHandlers(o *mcp.ClientOptions, elicited, sampled *atomic.Int32) {
	o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		elicited.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "client"}}, nil
	}
	o.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		sampled.Add(1)
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "client"}}, nil
	}
}

// mrtrCalls are the calls of the mrtr upstream's tools: what each answers
// when the client's handlers answer "client", the elicitations and
// samplings it asks for, and the upstream's rounds it takes.
var mrtrCalls = []struct {
	tool, want                string
	elicited, sampled, rounds int32
}{
	{"confirm", "elicited=client", 1, 0, 2},
	{"summarize", "sampled=client", 0, 1, 2},
	{"both", "elicited=client sampled=client", 1, 1, 3},
}

// callMRTR calls the mrtr upstream's tools through the proxy from cs and
// checks each answer, what the client was asked, and the call's audit
// rows in db: a client on 2026-07-28 makes each round a tools/call of its
// own, and a run of the chain with its row (the last ok, those before it
// input_required); for a client below, the proxy fulfils the rounds within
// the client's one call, one row.
func callMRTR(t *testing.T, cs *mcp.ClientSession, db string, elicited, sampled *atomic.Int32, stderr fmt.Stringer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range mrtrCalls {
		elicited.Store(0)
		sampled.Store(0)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}})
		require.NoError(t, err, "%s\nproxy's log:\n%s", c.tool, stderr)
		require.False(t, res.IsError, "%s: %s\nproxy's log:\n%s", c.tool, text(res), stderr)
		assert.Equal(t, c.want+" protocol=2026-07-28", text(res), "%s: the answer, and the upstream's protocol", c.tool)
		assert.Equal(t, c.elicited, elicited.Load(), "%s: the client's elicitation handler", c.tool)
		assert.Equal(t, c.sampled, sampled.Load(), "%s: the client's sampling handler", c.tool)
		want := []audit.RowOutcome{audit.OutcomeOK}
		if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
			for range c.rounds - 1 {
				want = append(want, audit.OutcomeInputRequired)
			}
		}
		// A round's row is emitted before the next round starts; for the
		// one row of a client below 2026-07-28, the one there is.
		rows := (&proxied{db: db}).rows(t, c.tool, len(want))
		var got []audit.RowOutcome
		for _, r := range rows {
			got = append(got, r.Outcome)
		}
		assert.Equal(t, want, got, "%s's rows, newest first: %+v", c.tool, rows)
	}
}

// TestMultiRoundTripStdio: a client on 2026-07-28, over stdio, calls
// through the proxy the tools of a stdio upstream on 2026-07-28 that
// answer input-required: the client's own handlers answer each request,
// the tool's final result reaches the client, and each round has its
// audit row. (go-sdk's client in the proxy fulfilled the requests itself
// with the proxy's handlers, whose requests go-sdk's server refuses to send
// a client on 2026-07-28: every call failed.)
func TestMultiRoundTripStdio(t *testing.T) {
	var elicited, sampled atomic.Int32
	p := startProxyWith(t, func(o *mcp.ClientOptions) { mrtrHandlers(o, &elicited, &sampled) },
		"-config", mrtrConfig(t), "--", os.Args[0])
	require.Equal(t, "2026-07-28", p.cs.InitializeResult().ProtocolVersion, "the client's protocol with the proxy")
	callMRTR(t, p.cs, p.db, &elicited, &sampled, p.stderr)
}

// mrtrConfig is the configuration in front of the mrtr upstream over
// stdio (this test binary in roleMRTR).
func mrtrConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.yaml")
	require.NoError(t, os.WriteFile(path, []byte("upstream:\n  env:\n    "+roleEnv+": "+roleMRTR+"\n"), 0o600))
	return path
}

// connectMRTR runs the proxy on streamable HTTP in front of the mrtr
// upstream, over stdio or (up "http") on streamable HTTP, stateless: go-sdk
// serves 2026-07-28 on HTTP only so. The proxy is stateless too for a
// client on 2026-07-28, stateful for one below, which it may send
// requests. It connects a client on version with the handlers of
// mrtrHandlers and the root clientRoot, and without go-sdk's own multi-round-trip handling when
// below 2026-07-28 (a client of those versions need not have it).
func connectMRTR(t *testing.T, up, version string, elicited, sampled *atomic.Int32) (*mcp.ClientSession, string, fmt.Stringer) {
	t.Helper()
	cfg := mrtrConfig(t)
	args := []string{"-config", cfg, "--", os.Args[0]}
	if up == "http" {
		require.NoError(t, os.WriteFile(cfg, []byte("upstream:\n  url: "+startLeakyURL(t, roleMRTRHTTP)+"\n"), 0o600))
		args = []string{"-config", cfg}
	}
	if version >= "2026-07-28" {
		args = append([]string{"-stateless"}, args...)
	}
	db := filepath.Join(t.TempDir(), "audit.db")
	url, stderr := startHTTPProxy(t, append([]string{"-audit-db", db}, args...)...)
	opts := &mcp.ClientOptions{}
	mrtrHandlers(opts, elicited, sampled)
	if version < "2026-07-28" {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "t"}, opts)
	client.AddRoots(&mcp.Root{URI: clientRoot, Name: "project"})
	cs, err := client.Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err, "connect to the proxy:\n%s", stderr)
	t.Cleanup(func() { _ = cs.Close() })
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "the client's protocol with the proxy")
	return cs, db, stderr
}

// TestMultiRoundTripHTTP: the same calls with the client on streamable
// HTTP, in front of the upstream over stdio and on streamable HTTP, from
// a client on 2026-07-28 and from one on 2025-11-25, whom the proxy asks
// with the requests of its protocol on the call's own stream.
func TestMultiRoundTripHTTP(t *testing.T) {
	for _, up := range []string{"stdio", "http"} {
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(up+"/"+version, func(t *testing.T) {
				var elicited, sampled atomic.Int32
				cs, db, stderr := connectMRTR(t, up, version, &elicited, &sampled)
				callMRTR(t, cs, db, &elicited, &sampled, stderr)
			})
		}
	}
}

// TestMultiRoundTripPrompt: a prompts/get that the upstream answers
// input-required, which the proxy forwards rather than serves with the
// chain, from a client on 2026-07-28 and from one on 2025-11-25.
func TestMultiRoundTripPrompt(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			var elicited, sampled atomic.Int32
			cs, _, stderr := connectMRTR(t, "stdio", version, &elicited, &sampled)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greeting"})
			require.NoError(t, err, "proxy's log:\n%s", stderr)
			require.Len(t, res.Messages, 1, "%+v", res)
			assert.Equal(t, "hello client", res.Messages[0].Content.(*mcp.TextContent).Text)
			assert.EqualValues(t, 1, elicited.Load())
		})
	}
}

// TestMultiRoundTripResource: a resources/read that the upstream answers
// input-required, forwarded as prompts/get is, from a client on 2026-07-28
// and from one on 2025-11-25, in front of the upstream over stdio and on
// streamable HTTP.
func TestMultiRoundTripResource(t *testing.T) {
	for _, up := range []string{"stdio", "http"} {
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(up+"/"+version, func(t *testing.T) {
				var elicited, sampled atomic.Int32
				cs, _, stderr := connectMRTR(t, up, version, &elicited, &sampled)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mrtrResource})
				require.NoError(t, err, "proxy's log:\n%s", stderr)
				require.Len(t, res.Contents, 1, "%+v", res)
				assert.Equal(t, "you are client", res.Contents[0].Text, "the upstream's final round")
				assert.Empty(t, res.InputRequests, "the client's own rounds are over")
				assert.EqualValues(t, 1, elicited.Load(), "the client's elicitation handler")
			})
		}
	}
}

// TestMultiRoundTripRoots: a tools/call whose upstream asks for the
// client's roots in its input-required answer: a client on 2026-07-28
// answers it with its roots and calls again, and the proxy asks a client
// on 2025-11-25 with roots/list on the call's stream; either way the
// upstream gets the client's root, and a client on 2026-07-28's rounds
// have their rows.
func TestMultiRoundTripRoots(t *testing.T) {
	for _, up := range []string{"stdio", "http"} {
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			t.Run(up+"/"+version, func(t *testing.T) {
				var elicited, sampled atomic.Int32
				cs, db, stderr := connectMRTR(t, up, version, &elicited, &sampled)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}})
				require.NoError(t, err, "proxy's log:\n%s", stderr)
				require.False(t, res.IsError, "%s\nproxy's log:\n%s", text(res), stderr)
				assert.Equal(t, "roots="+clientRoot+" protocol=2026-07-28", text(res), "the client's roots reach the upstream")
				want := []audit.RowOutcome{audit.OutcomeOK}
				if version >= "2026-07-28" {
					want = append(want, audit.OutcomeInputRequired)
				}
				var got []audit.RowOutcome
				for _, r := range (&proxied{db: db}).rows(t, "roots", len(want)) {
					got = append(got, r.Outcome)
				}
				assert.Equal(t, want, got, "the rows, newest first")
			})
		}
	}
}
