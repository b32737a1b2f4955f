package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	before, after, ok := strings.Cut(out.String(), "== the same server after mcpsdk.Install ==")
	require.True(t, ok, out.String())

	// Without toolmw, the go-sdk sends the raw error text to the client.
	assert.Contains(t, before, `client got: isError "GET `+UpstreamURL)

	// With it: the client sees the generic message, the operator the cause.
	var client, server []string
	for _, line := range strings.Split(after, "\n") {
		switch {
		case strings.Contains(line, "client got:"):
			client = append(client, line)
		case strings.Contains(line, "audit row:"), strings.Contains(line, "diagnostics:"):
			server = append(server, line)
		}
	}
	require.Len(t, client, 4)
	assert.Contains(t, client[0], `ok {"celsius":21.5,"city":"Paris"}`)
	assert.Contains(t, client[1], `isError "internal error: the tool failed; the cause was recorded on the server" {"code":"internal"}`)
	assert.Contains(t, client[2], `{"code":"invalid_arguments","detail":{"problems":[{"expected":"string","got":"integer","path":"city","rule":"type"}]}}`)
	assert.Contains(t, client[3], `isError "internal error: the tool failed; the cause was recorded on the server" {"code":"internal"}`, "the panic is recovered")
	for _, l := range client {
		assert.NotContains(t, l, "wx-live-7f3a9c")
		assert.NotContains(t, l, "nil map")
	}
	joined := strings.Join(server, "\n")
	assert.Contains(t, joined, `audit row: outcome=error code=internal message="GET `+UpstreamURL)
	assert.Contains(t, joined, `audit row: outcome=panic code=internal message="panic: assignment to entry in nil map"`)
	assert.Contains(t, joined, "diagnostics: GET "+UpstreamURL)
}
