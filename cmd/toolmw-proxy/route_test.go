package main

//lint:file-ignore SA1019 the proxy still forwards sampling (deprecated as of protocol 2026-07-28, SEP-2577) for the upstreams and clients that use it: these tests speak 2025-11-25.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// askerServer is an upstream whose tool ask asks its client for a
// sampling, then for an elicitation, and answers what the client said to
// each. Two calls of it go step by step together: each asks once both are
// in flight, and ends once both have their answers, so that neither is
// ever the only call in flight. It speaks 2025-11-25, where a server may
// still send requests to its client.
func askerServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1.0.0"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	var mu sync.Mutex
	arrived := map[int]int{}
	steps := map[int]chan struct{}{0: make(chan struct{}), 1: make(chan struct{}), 2: make(chan struct{})}
	// together returns once both calls have reached step.
	together := func(ctx context.Context, step int) error {
		mu.Lock()
		if arrived[step]++; arrived[step] == 2 {
			close(steps[step])
		}
		mu.Unlock()
		select {
		case <-steps[step]:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := together(ctx, 0); err != nil {
			return nil, err
		}
		var sampled, elicited string
		msg, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "who are you?"}}}})
		if err != nil {
			sampled = "sampling failed: " + err.Error()
		} else {
			sampled = "sampled=" + msg.Content.(*mcp.TextContent).Text
		}
		if err := together(ctx, 1); err != nil {
			return nil, err
		}
		el, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "who are you?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}})
		if err != nil {
			elicited = "elicitation failed: " + err.Error()
		} else {
			elicited = fmt.Sprintf("elicited=%v", el.Content["who"])
		}
		if err := together(ctx, 2); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sampled + " " + elicited}}}, nil
	})
	return s
}

// askClients connects a client to the proxy at url for each of calls'
// names, each answering sampling and elicitation with its name and
// counting what it was asked, and calls ask from each at once (a name
// given twice is one client making two calls). It returns each call's
// answer by its index in calls, and the number of requests each client
// got.
func askClients(t *testing.T, url string, calls ...string) (answers map[int]string, asked map[string]int) {
	var mu sync.Mutex
	answers, asked = map[int]string{}, map[string]int{}
	var wg sync.WaitGroup
	sessions := map[string]*mcp.ClientSession{}
	for i, name := range calls {
		if cs, ok := sessions[name]; ok {
			wg.Add(1)
			go func() { defer wg.Done(); answer := ask(cs); mu.Lock(); answers[i] = answer; mu.Unlock() }()
			continue
		}
		client := mcp.NewClient(&mcp.Implementation{Name: name}, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				mu.Lock()
				asked[name]++
				mu.Unlock()
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: name}}, nil
			},
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked[name]++
				mu.Unlock()
				assert.NotContains(t, r.Params.Meta, routeMeta, "the route key never reaches a client")
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": name}}, nil
			},
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		cancel()
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		sessions[name] = cs
		wg.Add(1)
		go func() { defer wg.Done(); answer := ask(cs); mu.Lock(); answers[i] = answer; mu.Unlock() }()
	}
	wg.Wait()
	return answers, asked
}

// ask calls the ask tool, and returns its text or its error.
func ask(cs *mcp.ClientSession) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil {
		return "error: " + err.Error()
	}
	return text(res)
}

// TestRequestsRouteToTheirCall: a streamable HTTP upstream's sampling and
// elicitation requests reach the client whose call they belong to, with
// two clients' calls in flight at once (routing to the call that started
// last sent both calls' requests to one client).
func TestRequestsRouteToTheirCall(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "proxy.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("upstream:\n  url: "+startLeakyURL(t, roleAskerHTTP)+"\n"), 0o600))
	url, stderr := startHTTPProxy(t, "-config", cfg)
	answers, asked := askClients(t, url, "a", "b")
	assert.Equal(t, map[int]string{0: "sampled=a elicited=a", 1: "sampled=b elicited=b"}, answers, "proxy log:\n%s", stderr)
	assert.Equal(t, map[string]int{"a": 2, "b": 2}, asked)
}

// TestUnroutableRequestsRefused: a stdio upstream's requests name no call;
// with the calls of two clients in flight the proxy cannot tell whose a
// request is, and refuses it rather than ask the wrong client.
func TestUnroutableRequestsRefused(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "proxy.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("upstream:\n  env:\n    "+roleEnv+": "+roleAsker+"\n"), 0o600))
	url, stderr := startHTTPProxy(t, "-config", cfg, "--", os.Args[0])
	answers, asked := askClients(t, url, "a", "b")
	for i := range 2 {
		assert.Contains(t, answers[i], "sampling failed: ", "proxy log:\n%s", stderr)
		assert.Contains(t, answers[i], "elicitation failed: ")
		assert.Contains(t, answers[i], "cannot tell which of its 2 client sessions")
	}
	assert.Empty(t, asked, "no client was asked for another's call")
}

// TestOneSessionsRequestsRoute: a stdio upstream's requests, with two
// calls of one client in flight, go to that client: there is no one else
// they can be for.
func TestOneSessionsRequestsRoute(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "proxy.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("upstream:\n  env:\n    "+roleEnv+": "+roleAsker+"\n"), 0o600))
	url, stderr := startHTTPProxy(t, "-config", cfg, "--", os.Args[0])
	answers, asked := askClients(t, url, "a", "a")
	assert.Equal(t, map[int]string{0: "sampled=a elicited=a", 1: "sampled=a elicited=a"}, answers, "proxy log:\n%s", stderr)
	assert.Equal(t, map[string]int{"a": 4}, asked)
}
