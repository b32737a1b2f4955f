package main

//lint:file-ignore SA1019 sampling and roots are deprecated as of protocol 2026-07-28 (SEP-2577) but still requests an upstream below it sends, which these tests bridge.

import (
	"context"
	"fmt"
	"net/http"
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
	"github.com/toolmw/toolmw/errs"
)

// bridgeServer is an upstream on 2025-11-25, where a server still asks
// its client by sending it requests mid-call: sample sends a sampling
// request, elicit an elicitation, roots a roots/list, twice an
// elicitation and then a sampling; each answers what the client said, or
// the request's error. progress reports progress before and after it
// elicits. abandoned elicits, then waits for its call to be
// cancelled, and keeps what became of its request and of its call, which
// abandoned_outcome answers once it is known (with the argument
// "answered", the elicitation's outcome alone).
func bridgeServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bridge", Version: "1.0.0"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	object := map[string]any{"type": "object"}
	sample := func(ctx context.Context, ss *mcp.ServerSession) string {
		msg, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "who are you?"}}}})
		if err != nil {
			return "sampling failed: " + err.Error()
		}
		tc, _ := msg.Content.(*mcp.TextContent)
		if tc == nil {
			return fmt.Sprintf("sampled %#v", msg.Content)
		}
		return "sampled=" + tc.Text
	}
	elicit := func(ctx context.Context, ss *mcp.ServerSession) string {
		el, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "who are you?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}})
		if err != nil {
			return "elicitation failed: " + err.Error()
		}
		return fmt.Sprintf("elicited=%v", el.Content["who"])
	}
	result := func(text string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	}
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(sample(ctx, req.Session)), nil
	})
	s.AddTool(&mcp.Tool{Name: "elicit", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(elicit(ctx, req.Session)), nil
	})
	s.AddTool(&mcp.Tool{Name: "twice", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(elicit(ctx, req.Session) + " " + sample(ctx, req.Session)), nil
	})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return result("roots failed: " + err.Error()), nil
		}
		return result("roots=" + rootURIs(roots.Roots)), nil
	})
	s.AddTool(&mcp.Tool{Name: "progress", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := req.Params.GetProgressToken()
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "before"})
		got := elicit(ctx, req.Session)
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 2, Message: "after"})
		return result(got), nil
	})
	answered, outcome := make(chan string, 1), make(chan string, 1)
	s.AddTool(&mcp.Tool{Name: "abandoned", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		got := elicit(ctx, req.Session)
		answered <- got
		wait := time.NewTimer(30 * time.Second)
		defer wait.Stop()
		select {
		case <-ctx.Done():
			got += "; the call was cancelled"
		case <-wait.C:
			got += "; the call was not cancelled within 30s"
		}
		outcome <- got
		return result(got), nil
	})
	s.AddTool(&mcp.Tool{Name: "abandoned_outcome", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ch := outcome
		if strings.Contains(string(req.Params.Arguments), `"answered"`) {
			ch = answered
		}
		select {
		case got := <-ch:
			return result(got), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return s
}

// bridgeCalls are the calls of the bridge upstream's tools: what each
// answers when the client's handlers answer "client" (and its root is
// clientRoot), the elicitations and samplings it asks for, and the rounds
// a client on 2026-07-28 makes of it.
var bridgeCalls = []struct {
	tool, want                string
	elicited, sampled, rounds int32
}{
	{"sample", "sampled=client", 0, 1, 2},
	{"elicit", "elicited=client", 1, 0, 2},
	{"roots", "roots=" + clientRoot, 0, 0, 2},
	{"twice", "elicited=client sampled=client", 1, 1, 3},
}

// callBridged calls the bridge upstream's tools from cs, a client on
// 2026-07-28 whose go-sdk fulfils input-required answers with its own
// handlers, and checks each answer, what the client was asked, and the
// call's rows in db: one per round, the last ok and those before it
// input_required.
func callBridged(t *testing.T, cs *mcp.ClientSession, db string, elicited, sampled *atomic.Int32, stderr fmt.Stringer) {
	t.Helper()
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion, "the client's protocol with the proxy")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range bridgeCalls {
		elicited.Store(0)
		sampled.Store(0)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}})
		require.NoError(t, err, "%s\nproxy's log:\n%s", c.tool, stderr)
		require.False(t, res.IsError, "%s: %s\nproxy's log:\n%s", c.tool, text(res), stderr)
		assert.Equal(t, c.want, text(res), "%s: the upstream got the client's answers", c.tool)
		assert.Equal(t, c.elicited, elicited.Load(), "%s: the client's elicitation handler", c.tool)
		assert.Equal(t, c.sampled, sampled.Load(), "%s: the client's sampling handler", c.tool)
		want := []audit.RowOutcome{audit.OutcomeOK}
		for range c.rounds - 1 {
			want = append(want, audit.OutcomeInputRequired)
		}
		assert.Equal(t, want, outcomes((&proxied{db: db}).rows(t, c.tool, len(want))), "%s's rows, newest first", c.tool)
	}
}

func outcomes(rows []audit.Record) []audit.RowOutcome {
	var got []audit.RowOutcome
	for _, r := range rows {
		got = append(got, r.Outcome)
	}
	return got
}

// bridgeConfig writes the configuration in front of the bridge upstream,
// over stdio (up "stdio": this test binary in roleBridge) or on streamable
// HTTP (roleBridgeHTTP), with extra YAML appended; it returns the
// proxy's arguments.
func bridgeConfig(t *testing.T, up, extra string) []string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "proxy.yaml")
	if up == "http" {
		require.NoError(t, os.WriteFile(cfg, []byte("upstream:\n  url: "+startLeakyURL(t, roleBridgeHTTP)+"\n"+extra), 0o600))
		return []string{"-config", cfg}
	}
	require.NoError(t, os.WriteFile(cfg, []byte("upstream:\n  env:\n    "+roleEnv+": "+roleBridge+"\n"+extra), 0o600))
	return []string{"-config", cfg, "--", os.Args[0]}
}

// startBridgeProxy runs the proxy on stateless streamable HTTP (go-sdk
// serves 2026-07-28 on HTTP only so) in front of the bridge upstream; it
// returns the endpoint, the audit database and the proxy's log.
func startBridgeProxy(t *testing.T, up, extra string) (string, string, fmt.Stringer) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "audit.db")
	url, stderr := startHTTPProxy(t, append([]string{"-stateless", "-audit-db", db}, bridgeConfig(t, up, extra)...)...)
	return url, db, stderr
}

// connectBridge connects a client on 2026-07-28 to the proxy at url, with
// the handlers of mrtrHandlers and the root clientRoot; manual turns
// go-sdk's own multi-round-trip handling off, so that the test makes the
// rounds itself. token, if any, is its bearer token.
func connectBridge(t *testing.T, url string, manual bool, token string, elicited, sampled *atomic.Int32) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	mrtrHandlers(opts, elicited, sampled)
	if manual {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "t"}, opts)
	client.AddRoots(&mcp.Root{URI: clientRoot, Name: "project"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearerTransport{token}}
	}
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	require.NoError(t, err, "connect to the proxy")
	t.Cleanup(func() { _ = cs.Close() })
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion, "the client's protocol with the proxy")
	return cs
}

// TestBridgeStdio: a client on 2026-07-28 over stdio calls, through the
// proxy, the tools of a stdio upstream on 2025-11-25 that send it
// sampling, elicitation and roots requests mid-call, one and then another
// in a row: each request reaches the client in an input-required answer,
// the client's answer reaches the upstream's waiting request, the tool's
// result is the answer of the client's last round, and each round has its
// row. (Before the bridge, go-sdk's server refused to send the requests
// and the upstream got the refusal.)
func TestBridgeStdio(t *testing.T) {
	var elicited, sampled atomic.Int32
	p := startProxyWith(t, func(o *mcp.ClientOptions) { mrtrHandlers(o, &elicited, &sampled) }, bridgeConfig(t, "stdio", "")...)
	callBridged(t, p.cs, p.db, &elicited, &sampled, p.stderr)
}

// TestBridgeHTTP: the same calls from a client on streamable HTTP, in
// front of the upstream over stdio and on streamable HTTP (whose requests
// travel on their call's own response stream).
func TestBridgeHTTP(t *testing.T) {
	for _, up := range []string{"stdio", "http"} {
		t.Run(up, func(t *testing.T) {
			var elicited, sampled atomic.Int32
			url, db, stderr := startBridgeProxy(t, up, "")
			callBridged(t, connectBridge(t, url, false, "", &elicited, &sampled), db, &elicited, &sampled, stderr)
		})
	}
}

// callRaw calls tool with answers and state (and the argument step, if
// given), and fails the test on a protocol error.
func callRaw(t *testing.T, cs *mcp.ClientSession, tool string, answers mcp.InputResponseMap, state string, step ...string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := map[string]any{}
	if len(step) > 0 {
		args["step"] = step[0]
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, InputResponses: answers, RequestState: state})
	require.NoError(t, err, "tools/call %s", tool)
	return res
}

// oneRequest is the one input request of an input-required answer, and
// its id.
func oneRequest(t *testing.T, res *mcp.CallToolResult) (string, mcp.InputRequest) {
	t.Helper()
	require.False(t, res.IsError, "an input-required answer, not %s", text(res))
	require.Len(t, res.InputRequests, 1, "the input requests of %+v", res)
	for id, r := range res.InputRequests {
		return id, r
	}
	return "", nil
}

// assertUnknownState checks that res is the public refusal of a request
// state that names no parked call.
func assertUnknownState(t *testing.T, res *mcp.CallToolResult, why string) {
	t.Helper()
	assert.True(t, res.IsError, "%s: refused", why)
	assert.Equal(t, errs.CodeInvalidArguments, errorCode(t, res), why)
	assert.Equal(t, "unknown or expired request state: call the tool again without it", text(res), "%s: nothing more is said", why)
	assert.Empty(t, res.InputRequests, why)
}

// TestBridgeRounds makes the rounds of twice (an elicitation, then a
// sampling) by hand: each input-required answer carries the upstream's
// request under a fresh id of the proxy's and a fresh random state; a
// state already resumed, one made up, and one given with another tool's
// name are refused as unknown or expired (the last without spending the
// state), and the last round answers the tool's result.
func TestBridgeRounds(t *testing.T) {
	var elicited, sampled atomic.Int32
	url, db, stderr := startBridgeProxy(t, "stdio", "")
	cs := connectBridge(t, url, true, "", &elicited, &sampled)

	res := callRaw(t, cs, "twice", nil, "")
	id1, r1 := oneRequest(t, res)
	el, ok := r1.(*mcp.ElicitParams)
	require.True(t, ok, "the first request is the upstream's elicitation: %#v", r1)
	assert.Equal(t, "who are you?", el.Message)
	assert.NotContains(t, el.Meta, routeMeta, "the route key never reaches a client")
	state1 := res.RequestState
	require.True(t, strings.HasPrefix(state1, bridgeStatePrefix), "the proxy's state: %q", state1)
	assert.GreaterOrEqual(t, len(state1)-len(bridgeStatePrefix), 43, "32 random bytes, in base64")

	res = callRaw(t, cs, "twice", mcp.InputResponseMap{id1: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "by-hand"}}}, state1)
	id2, r2 := oneRequest(t, res)
	_, ok = r2.(*mcp.CreateMessageWithToolsParams)
	require.True(t, ok, "the second request is the upstream's sampling: %#v", r2)
	assert.NotEqual(t, id1, id2, "a fresh id for each request")
	state2 := res.RequestState
	assert.NotEqual(t, state1, state2, "a fresh state for each round")

	assertUnknownState(t, callRaw(t, cs, "twice", mcp.InputResponseMap{id1: &mcp.ElicitResult{Action: "accept"}}, state1), "a state resumed already")
	assertUnknownState(t, callRaw(t, cs, "twice", nil, bridgeStatePrefix+"made-up"), "a made-up state")
	assertUnknownState(t, callRaw(t, cs, "elicit", nil, state2), "another tool's call")

	res = callRaw(t, cs, "twice", mcp.InputResponseMap{id2: &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant",
		Content: []mcp.Content{&mcp.TextContent{Text: "by-hand"}}}}, state2)
	require.False(t, res.IsError, "%s\nproxy's log:\n%s", text(res), stderr)
	assert.Empty(t, res.InputRequests)
	assert.Equal(t, "elicited=by-hand sampled=by-hand", text(res), "the upstream got both answers")
	assert.Zero(t, elicited.Load()+sampled.Load(), "the test answered, not the client's handlers")

	rows := (&proxied{db: db}).rows(t, "twice", 5)
	assert.Equal(t, []audit.RowOutcome{audit.OutcomeOK, audit.OutcomeRejected, audit.OutcomeRejected, audit.OutcomeInputRequired, audit.OutcomeInputRequired},
		outcomes(rows), "twice's rows, newest first: the refused states' rows between")
}

// TestBridgeNotResumed: a client that never calls again. Once
// bridge.resume_timeout has passed, the proxy cancels the call upstream:
// the upstream's elicitation fails and its call is cancelled; the log
// says so; the state is unknown from then on. (goleak, in TestMain,
// checks that nothing of the call's is left running.)
func TestBridgeNotResumed(t *testing.T) {
	for _, up := range []string{"stdio", "http"} {
		t.Run(up, func(t *testing.T) {
			var elicited, sampled atomic.Int32
			url, db, stderr := startBridgeProxy(t, up, "bridge:\n  resume_timeout: 200ms\n")
			cs := connectBridge(t, url, true, "", &elicited, &sampled)
			res := callRaw(t, cs, "abandoned", nil, "")
			id, _ := oneRequest(t, res)
			state := res.RequestState

			// The upstream's tool says what became of its request and its
			// call, once it knows.
			got := text(callRaw(t, cs, "abandoned_outcome", nil, ""))
			assert.Contains(t, got, "elicitation failed: ", "the upstream's request failed\nproxy's log:\n%s", stderr)
			// The request's error and the call's cancellation race to the
			// upstream: the request fails with the proxy's reason, or with
			// the call's cancellation when that comes first.
			why := strings.Contains(got, "the client did not call again within 200ms") || strings.Contains(got, "context canceled")
			assert.True(t, why, "the request failed with the proxy's reason or the call's cancellation: %s", got)
			assert.Contains(t, got, "; the call was cancelled", "the upstream's call was cancelled")
			assert.Contains(t, stderr.String(), "bridge: a parked call ended before its client called again: the call is cancelled upstream", "the log says so")

			assertUnknownState(t, callRaw(t, cs, "abandoned", mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept"}}, state), "an expired state")
			rows := (&proxied{db: db}).rows(t, "abandoned", 3)
			assert.Equal(t, []audit.RowOutcome{audit.OutcomeRejected, audit.OutcomeTimeout, audit.OutcomeInputRequired},
				outcomes(rows), "abandoned's rows, newest first: the parked call's end has a row of its own")
			if len(rows) == 3 {
				r := rows[1]
				assert.Equal(t, errs.CodeTimeout, r.Code, "the expired call's row")
				assert.Equal(t, "parked for the client's input: the client did not call again within 200ms; the call is cancelled upstream",
					r.Message, "the row says why the call ended and what became of it upstream")
				assert.GreaterOrEqual(t, r.Duration, 200*time.Millisecond, "its duration is the wait")
				assert.NotEmpty(t, r.CallID, "and it has a call id")
			}
			assert.Zero(t, elicited.Load()+sampled.Load(), "the client's handlers")
		})
	}
}

// TestBridgeStopWritesTheParkedRow: a call parked when the proxy stops
// is ended, and its row says so (unavailable: the proxy is stopping),
// with the subject of the call's bearer token (on stateless HTTP there
// is no session).
func TestBridgeStopWritesTheParkedRow(t *testing.T) {
	t.Setenv("TOOLMW_PROXY_TEST_ALICE", "token-of-alice")
	var elicited, sampled atomic.Int32
	db := filepath.Join(t.TempDir(), "audit.db")
	url, stderr, stop := startStoppableProxy(t, append([]string{"-stateless", "-audit-db", db}, bridgeConfig(t, "http",
		"auth:\n  tokens:\n    - subject: alice\n      token_env: TOOLMW_PROXY_TEST_ALICE\n")...)...)
	cs := connectBridge(t, url, true, "token-of-alice", &elicited, &sampled)
	_, _ = oneRequest(t, callRaw(t, cs, "elicit", nil, ""))
	stop()
	rows := (&proxied{db: db}).rows(t, "elicit", 2)
	require.Equal(t, []audit.RowOutcome{audit.OutcomeError, audit.OutcomeInputRequired}, outcomes(rows),
		"elicit's rows, newest first: the round's, then the parked call's end\nproxy's log:\n%s", stderr)
	r := rows[0]
	assert.Equal(t, errs.CodeUnavailable, r.Code)
	assert.Equal(t, "parked for the client's input: the proxy is stopping; the call is cancelled upstream", r.Message)
	assert.Equal(t, "alice", r.Subject, "the row names the caller")
	assert.Equal(t, rows[1].SessionID, r.SessionID, "and the round's session (none here)")
	assert.Contains(t, stderr.String(), "bridge: a parked call ended before its client called again", "the log says so")
}

// TestBridgeParkedBound: with bridge.max_parked 1, a second call that
// asks while one is parked is refused (unavailable, and its upstream
// request gets an error); once the first is resumed, a call may park
// again. (The upstream is on streamable HTTP: a stdio upstream's request
// names no call, and with a call parked and another in flight the proxy
// could not tell whose it is; on stateless HTTP each call is a session.)
func TestBridgeParkedBound(t *testing.T) {
	var elicited, sampled atomic.Int32
	url, db, stderr := startBridgeProxy(t, "http", "bridge:\n  max_parked: 1\n")
	cs := connectBridge(t, url, true, "", &elicited, &sampled)
	first := callRaw(t, cs, "elicit", nil, "")
	id, _ := oneRequest(t, first)

	refused := callRaw(t, cs, "elicit", nil, "")
	assert.True(t, refused.IsError, "a second parked call is refused: %s", text(refused))
	assert.Equal(t, errs.CodeUnavailable, errorCode(t, refused))
	assert.Equal(t, "the proxy has too many calls waiting for their clients' answers: try again later", text(refused))
	assert.Contains(t, stderr.String(), "too many calls are parked", "the log says so")

	res := callRaw(t, cs, "elicit", mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "first"}}}, first.RequestState)
	assert.Equal(t, "elicited=first", text(res), "the parked call, resumed\nproxy's log:\n%s", stderr)
	_, _ = oneRequest(t, callRaw(t, cs, "elicit", nil, "")) // parks again, and is ended when the proxy stops
	assert.Equal(t, []audit.RowOutcome{audit.OutcomeInputRequired, audit.OutcomeOK, audit.OutcomeError, audit.OutcomeInputRequired},
		outcomes((&proxied{db: db}).rows(t, "elicit", 4)), "elicit's rows, newest first")
}

// TestBridgeOtherCaller: a parked call's state is bound to its caller: on
// stateless HTTP, where there is no session, to the bearer token's
// subject. Another subject's call with it is refused as unknown, and the
// state still resumes its own caller's call.
func TestBridgeOtherCaller(t *testing.T) {
	t.Setenv("TOOLMW_PROXY_TEST_ALICE", "token-of-alice")
	t.Setenv("TOOLMW_PROXY_TEST_BOB", "token-of-bob")
	var elicited, sampled atomic.Int32
	url, _, stderr := startBridgeProxy(t, "stdio", `auth:
  tokens:
    - subject: alice
      token_env: TOOLMW_PROXY_TEST_ALICE
    - subject: bob
      token_env: TOOLMW_PROXY_TEST_BOB
`)
	alice := connectBridge(t, url, true, "token-of-alice", &elicited, &sampled)
	bob := connectBridge(t, url, true, "token-of-bob", &elicited, &sampled)
	res := callRaw(t, alice, "elicit", nil, "")
	id, _ := oneRequest(t, res)
	answers := mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "alice"}}}
	assertUnknownState(t, callRaw(t, bob, "elicit", answers, res.RequestState), "another caller's state")
	res = callRaw(t, alice, "elicit", answers, res.RequestState)
	assert.Equal(t, "elicited=alice", text(res), "the state's own caller resumes\nproxy's log:\n%s", stderr)
}

// TestBridgeClientCancels: a client that cancels a round of a bridged
// call, the upstream's call running, cancels the upstream's call.
func TestBridgeClientCancels(t *testing.T) {
	var elicited, sampled atomic.Int32
	p := startProxyWith(t, func(o *mcp.ClientOptions) {
		mrtrHandlers(o, &elicited, &sampled)
		o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}, bridgeConfig(t, "stdio", "")...)
	res := callRaw(t, p.cs, "abandoned", nil, "")
	id, _ := oneRequest(t, res)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "abandoned", Arguments: map[string]any{},
			InputResponses: mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "cancelled"}}},
			RequestState:   res.RequestState})
		done <- err
	}()
	// Once the upstream has the answer, the round waits for its call.
	assert.Equal(t, "elicited=cancelled", text(callRaw(t, p.cs, "abandoned_outcome", nil, "", "answered")), "proxy's log:\n%s", p.stderr)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled, "the client's round")
	assert.Equal(t, "elicited=cancelled; the call was cancelled", text(callRaw(t, p.cs, "abandoned_outcome", nil, "")), "the upstream's call")
	assert.Equal(t, []audit.RowOutcome{audit.OutcomeCanceled, audit.OutcomeInputRequired},
		outcomes(p.rows(t, "abandoned", 2)), "abandoned's rows, newest first")
}

// TestBridgeProgress: the upstream's progress reaches the round in flight,
// under that round's own token: the progress before its request with the
// first round's token, the progress after with the second's.
func TestBridgeProgress(t *testing.T) {
	var elicited, sampled atomic.Int32
	p := startProxyWith(t, func(o *mcp.ClientOptions) {
		mrtrHandlers(o, &elicited, &sampled)
		o.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}, bridgeConfig(t, "stdio", "")...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
	params.SetProgressToken("round-1")
	res, err := p.cs.CallTool(ctx, params)
	require.NoError(t, err)
	id, _ := oneRequest(t, res)
	select {
	case n := <-p.progress:
		assert.Equal(t, "round-1", n.ProgressToken, "the first round's token")
		assert.Equal(t, "before", n.Message)
	case <-ctx.Done(): // go-sdk's client may hand out the answer before it handles the notification sent before it
		t.Fatalf("the progress before the request did not arrive\nproxy's log:\n%s", p.stderr)
	}
	params = &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": "progress"}}}}
	params.SetProgressToken("round-2")
	res, err = p.cs.CallTool(ctx, params)
	require.NoError(t, err)
	assert.Equal(t, "elicited=progress", text(res))
	select {
	case n := <-p.progress:
		assert.Equal(t, "round-2", n.ProgressToken, "the second round's token")
		assert.Equal(t, "after", n.Message)
	case <-ctx.Done():
		t.Fatalf("the progress after the request did not arrive\nproxy's log:\n%s", p.stderr)
	}
}
