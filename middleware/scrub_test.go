package middleware_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

// secretSamples are one credential of each default rule's shape, with the
// part that must not leave the server; test values, none real.
var secretSamples = []struct{ rule, text, secret string }{
	{"private_key", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAtestonly\n-----END RSA PRIVATE KEY-----\nend", "MIIEowIBAAKCAQEAtestonly"},
	{"private_key", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANtestonly\n-----END PRIVATE KEY-----\n"}`, "MIIEvQIBADANtestonly"},
	{"connection_string", "dial postgres://reporting:hunter2secret@db-7.internal:5432/sales failed", "hunter2secret"},
	{"bearer_token", "sent Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.testonly.sig to the API", "eyJhbGciOiJIUzI1NiJ9.testonly.sig"},
	{"aws_access_key_id", "id AKIAIOSFODNN7TESTONL in use", "AKIAIOSFODNN7TESTONL"},
	{"aws_secret_access_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTONLYKE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTONLYKE"},
	{"gcp_api_key", "key=AIzaSyTESTONLY0123456789abcdefghijklmno", "AIzaSyTESTONLY0123456789abcdefghijklmno"},
	{"github_token", "token ghp_TESTONLY0123456789abcdefghijklmnopqrs here", "ghp_TESTONLY0123456789abcdefghijklmnopqrs"},
	{"github_token", "token github_pat_11TESTONLY0123456789_abcdefghijkl here", "github_pat_11TESTONLY0123456789_abcdefghijkl"},
	{"slack_token", "slack xoxb-123456789012-TESTONLYabcdef", "xoxb-123456789012-TESTONLYabcdef"},
	{"slack_webhook", "post to https://hooks.slack.com/services/T000/B000/TESTONLYxyz now", "TESTONLYxyz"},
	{"openai_key", "OPENAI_API_KEY=sk-proj-TESTONLY0123456789abcdefXYZ", "TESTONLY0123456789abcdefXYZ"},
}

// ScrubSecrets through both adapters: every default shape, in text and in
// structured content, is replaced by its marker before the result leaves;
// the row names the rule, never the secret; clean output passes untouched.
func TestScrubSecretsThroughAdapters(t *testing.T) {
	tools := map[string]toolctx.Handler{"clean": textTool("nothing to see: https://example.com/a?b=c")}
	for i, s := range secretSamples {
		text := s.text
		tools["text_"+string(rune('a'+i))] = textTool(text)
		tools["structured_"+string(rune('a'+i))] = toolctx.HandlerFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
			return toolctx.StructuredResult(map[string]any{"log": []any{"ok", text}, "n": 1})
		})
	}
	custom := middleware.ScrubRule{Name: "employee_id", Pattern: regexp.MustCompile(`EMP-[0-9]{6}`), Hints: []string{"EMP-"}}
	tools["custom"] = textTool("owner EMP-123456")
	forEachSDK(t, tools, []toolctx.Middleware{middleware.ScrubSecrets(middleware.ScrubConfig{Rules: []middleware.ScrubRule{custom}})}, func(t *testing.T, call caller, side *serverSide) {
		ctx := context.Background()
		for i, s := range secretSamples {
			for _, kind := range []string{"text_", "structured_"} {
				got := call(t, ctx, callOpts{Tool: kind + string(rune('a'+i))})
				require.False(t, got.IsError, "%s %s: still a success: %s", kind, s.rule, got.JSON)
				assert.NotContains(t, got.JSON, s.secret, "%s %s: the secret never leaves", kind, s.rule)
				assert.Contains(t, got.JSON, "[redacted:"+s.rule+"]", "%s %s: the marker is in its place", kind, s.rule)
			}
		}
		assert.NotContains(t, call(t, ctx, callOpts{Tool: "custom"}).JSON, "123456", "a user's rule")
		clean := call(t, ctx, callOpts{Tool: "clean"})
		assert.Equal(t, "nothing to see: https://example.com/a?b=c", clean.Text, "clean output is untouched")

		rows, diags := side.take()
		require.Len(t, rows, 2*len(secretSamples)+2, "one row per call")
		for i, r := range rows[:2*len(secretSamples)] {
			s := secretSamples[i/2]
			v, ok := noteOf(r.Notes, middleware.NoteScrubbed)
			require.True(t, ok, "%s: the row says it was scrubbed", r.Tool)
			assert.Contains(t, strings.Split(v, ","), s.rule, "%s: and by which rule", r.Tool)
			for _, n := range r.Notes {
				assert.NotContains(t, n.Value, s.secret, "%s: never the secret", r.Tool)
			}
		}
		v, _ := noteOf(rows[len(rows)-2].Notes, middleware.NoteScrubbed)
		assert.Equal(t, "employee_id", v, "the user's rule is named")
		assert.Empty(t, rows[len(rows)-1].Notes, "a clean result has no note")
		assert.Empty(t, diags, "no diagnostics")
	})
}

func noteOf(notes []toolctx.Note, key string) (string, bool) {
	for _, n := range notes {
		if n.Key == key {
			return n.Value, true
		}
	}
	return "", false
}

func TestScrubSecretsUnit(t *testing.T) {
	clean := toolctx.TextResult(strings.Repeat("plain words ", 100))
	h := thenG(t, middleware.New(middleware.ScrubSecrets(middleware.ScrubConfig{})), returning(clean))
	assert.Same(t, clean, h.CallTool(context.Background(), reqG("t")), "a clean result is returned as it is, not copied")

	shared := &toolctx.CallResult{Content: []toolctx.Content{&toolctx.Text{Text: "AKIAIOSFODNN7TESTONL"}, &toolctx.EmbeddedResource{
		Resource: toolctx.ResourceContents{URI: "file:///env", Text: "db=mysql://root:toor@localhost/x"}}}}
	h = thenG(t, middleware.New(middleware.ScrubSecrets(middleware.ScrubConfig{})), returning(shared))
	res := h.CallTool(context.Background(), reqG("t"))
	assert.Equal(t, "[redacted:aws_access_key_id]", res.Content[0].(*toolctx.Text).Text, "the whole match")
	assert.Equal(t, "db=mysql://root:[redacted:connection_string]@localhost/x", res.Content[1].(*toolctx.EmbeddedResource).Resource.Text, "only the secret group, in an embedded resource")
	assert.Equal(t, "AKIAIOSFODNN7TESTONL", shared.Content[0].(*toolctx.Text).Text, "the handler's (maybe shared) result is not changed")
	v, _ := res.Note(middleware.NoteScrubbed)
	assert.Equal(t, "connection_string,aws_access_key_id", v, "the rules that matched, in rule order")

	cut := toolctx.TextResult("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAtestonly")
	h = thenG(t, middleware.New(middleware.ScrubSecrets(middleware.ScrubConfig{})), returning(cut))
	assert.Equal(t, "[redacted:private_key]", h.CallTool(context.Background(), reqG("t")).Content[0].(*toolctx.Text).Text, "a key cut off before its END line goes to the end")

	only := middleware.ScrubSecrets(middleware.ScrubConfig{NoDefaultRules: true, Rules: []middleware.ScrubRule{{Name: "x", Pattern: regexp.MustCompile(`x+`)}}})
	h = thenG(t, middleware.New(only), returning(toolctx.TextResult("AKIAIOSFODNN7TESTONL xx")))
	assert.Equal(t, "AKIAIOSFODNN7TESTONL [redacted:x]", h.CallTool(context.Background(), reqG("t")).Content[0].(*toolctx.Text).Text, "NoDefaultRules: only the user's rules")

	for name, cfg := range map[string]middleware.ScrubConfig{
		"no rules":   {NoDefaultRules: true},
		"bad name":   {Rules: []middleware.ScrubRule{{Name: "a b", Pattern: regexp.MustCompile(`x`)}}},
		"no pattern": {Rules: []middleware.ScrubRule{{Name: "ab"}}},
	} {
		assert.Panics(t, func() { middleware.ScrubSecrets(cfg) }, "%s: a construction mistake fails at construction", name)
	}
	assert.Len(t, middleware.DefaultScrubRules(), 10, "the default rules")
}
