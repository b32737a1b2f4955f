package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolmw/toolmw/toolctx"
)

// NoteScrubbed is the note [ScrubSecrets] writes on a result it changed:
// the names of the rules that matched, comma-separated. Never the secret.
const NoteScrubbed = "scrubbed"

// ScrubRule is one shape of secret.
type ScrubRule struct {
	// Name names the rule in the marker and the audit row; letters,
	// digits and underscores.
	Name string
	// Pattern matches the secret. When it has a group named "secret",
	// only that group is replaced (the password of a connection string,
	// not its host); otherwise the whole match is.
	Pattern *regexp.Regexp
	// Hints are literal strings one of which every match contains ("AKIA"
	// for AWS access keys): text that contains none is not searched with
	// Pattern, which keeps clean output cheap. Empty: always search.
	Hints []string
}

// ScrubConfig configures [ScrubSecrets].
type ScrubConfig struct {
	// Rules are searched after the default ones ([DefaultScrubRules]).
	Rules []ScrubRule
	// NoDefaultRules leaves the default rules out: only Rules are
	// searched.
	NoDefaultRules bool
}

// DefaultScrubRules returns the shapes of secret that [ScrubSecrets] looks
// for by default, as a new slice: private-key blocks (PEM, and the
// private_key of a GCP service-account file), passwords in connection
// strings (scheme://user:password@host), bearer tokens, AWS access key ids
// and secret access keys, GCP API keys, GitHub tokens (ghp_, gho_, ghu_,
// ghs_, ghr_, github_pat_), Slack tokens and webhook URLs, and OpenAI-style
// "sk-" keys.
func DefaultScrubRules() []ScrubRule {
	return []ScrubRule{
		{Name: "private_key", Hints: []string{"PRIVATE KEY-----"},
			// No END line (a cut-off key): everything after BEGIN goes.
			Pattern: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\z)`)},
		{Name: "connection_string", Hints: []string{"://"},
			Pattern: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@"'<>]*:(?P<secret>[^\s/?#@"'<>]+)@`)},
		{Name: "bearer_token", Hints: []string{"earer", "EARER"},
			Pattern: regexp.MustCompile(`(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)`)},
		{Name: "aws_access_key_id", Hints: []string{"AKIA", "ASIA", "ABIA", "ACCA"},
			Pattern: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
		{Name: "aws_secret_access_key", Hints: []string{"ecret", "ECRET"},
			Pattern: regexp.MustCompile(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+=]{40})`)},
		{Name: "gcp_api_key", Hints: []string{"AIza"},
			Pattern: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
		{Name: "github_token", Hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			Pattern: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`)},
		{Name: "slack_token", Hints: []string{"xox"},
			Pattern: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`)},
		{Name: "slack_webhook", Hints: []string{"hooks.slack.com"},
			Pattern: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+`)},
		{Name: "openai_key", Hints: []string{"sk-"},
			Pattern: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_\-]{20,}`)},
	}
}

var ruleName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// ScrubSecrets replaces what looks like a credential in a successful result
// (and in a handler's own isError result) by a marker, "[redacted:RULE]",
// before the result leaves: in its text content, the text of its embedded
// resources and every string of its structured content. It is opt-in: a
// tool that returns credentials on purpose must not be behind it. The audit
// row gets the note "scrubbed" with the names of the rules that matched,
// never the secret. Images, audio, blobs, resource links and the result's
// _meta are not searched, nor is an input-required result
// ([toolctx.CallResult.NeedsInput]), which passes through as it is.
//
// Structured content is decoded and encoded again when a hint is found in
// its JSON; if the scrubbed value no longer encodes, the call fails as an
// internal error (the secret stays on the server, in the row's message
// only as "scrub broke the structured content"). Place it inside
// MaxResultBytes (which then measures the scrubbed result) and inside
// Cache (which then keeps it scrubbed). Text with none of the rules' hints
// costs one substring search per hint; see BENCHMARKS.md for the cost per
// KB. An invalid rule (no name, no pattern) panics, at construction. In
// observe mode ([Observe]) the result is sent unscrubbed, noted
// "would_reject=scrub_secrets" and "would_scrubbed" with the rules that
// matched.
func ScrubSecrets(cfg ScrubConfig) toolctx.Middleware {
	var rules []ScrubRule
	if !cfg.NoDefaultRules {
		rules = DefaultScrubRules()
	}
	for _, r := range cfg.Rules {
		switch {
		case !ruleName.MatchString(r.Name):
			panic(fmt.Sprintf("middleware.ScrubSecrets: rule name %q must be letters, digits and underscores", r.Name))
		case r.Pattern == nil:
			panic(fmt.Sprintf("middleware.ScrubSecrets: rule %q has no pattern", r.Name))
		}
		r.Hints = append([]string(nil), r.Hints...)
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		panic("middleware.ScrubSecrets: no rules")
	}
	s := &scrubber{rules: make([]scrubRule, len(rules))}
	for i, r := range rules {
		s.rules[i] = scrubRule{ScrubRule: r, marker: "[redacted:" + r.Name + "]", group: r.Pattern.SubexpIndex("secret")}
	}
	return func(next toolctx.Handler) toolctx.Handler {
		return toolctx.HandlerFunc(func(ctx context.Context, req *toolctx.Request) *toolctx.CallResult {
			res := next.CallTool(ctx, req)
			if res == nil || res.Cause() != nil || res.Error != nil || res.NeedsInput() {
				// An input-required result has no content; its requests
				// (what the user is asked) are the handler's, sent as
				// they are.
				return res
			}
			return replace(ctx, guardScrubSecrets, res, s.result(res))
		})
	}
}

type scrubRule struct {
	ScrubRule
	marker string
	group  int // the "secret" group, or -1
}

type scrubber struct{ rules []scrubRule }

// hits records which rules matched.
type hits []bool

func (s *scrubber) result(res *toolctx.CallResult) *toolctx.CallResult {
	var h hits
	var content []toolctx.Content
	for i, c := range res.Content {
		var repl toolctx.Content
		switch c := c.(type) {
		case *toolctx.Text:
			if t, ok := s.text(c.Text, &h); ok {
				cp := *c
				cp.Text = t
				repl = &cp
			}
		case *toolctx.EmbeddedResource:
			if t, ok := s.text(c.Resource.Text, &h); ok {
				cp := *c
				cp.Resource.Text = t
				repl = &cp
			}
		}
		if repl != nil {
			if content == nil {
				content = append([]toolctx.Content(nil), res.Content...)
			}
			content[i] = repl
		}
	}
	structured, changed, err := s.structured(res.StructuredContent, &h)
	if err != nil {
		return keepNotes(res, toolctx.ErrorResult(fmt.Errorf("middleware.ScrubSecrets: scrub broke the structured content: %w", err)))
	}
	if content == nil && !changed {
		return res
	}
	out := *res
	if content != nil {
		out.Content = content
	}
	if changed {
		out.StructuredContent = structured
	}
	var names []string
	for i, hit := range h {
		if hit {
			names = append(names, s.rules[i].Name)
		}
	}
	return out.WithNote(NoteScrubbed, strings.Join(names, ","))
}

// text returns t with every match replaced, and whether anything was.
func (s *scrubber) text(t string, h *hits) (string, bool) {
	changed := false
	for i := range s.rules {
		r := &s.rules[i]
		if !r.hinted(t) {
			continue
		}
		locs := r.Pattern.FindAllStringSubmatchIndex(t, -1)
		if locs == nil {
			continue
		}
		var b strings.Builder
		last := 0
		for _, loc := range locs {
			start, end := loc[0], loc[1]
			if r.group >= 0 {
				start, end = loc[2*r.group], loc[2*r.group+1]
				if start < 0 {
					continue
				}
			}
			b.WriteString(t[last:start])
			b.WriteString(r.marker)
			last = end
		}
		if last == 0 {
			continue
		}
		b.WriteString(t[last:])
		t, changed = b.String(), true
		if *h == nil {
			*h = make(hits, len(s.rules))
		}
		(*h)[i] = true
	}
	return t, changed
}

func (r *scrubRule) hinted(t string) bool {
	if len(r.Hints) == 0 {
		return true
	}
	for _, hint := range r.Hints {
		if strings.Contains(t, hint) {
			return true
		}
	}
	return false
}

// structured scrubs every string of v's JSON; it returns the new value as
// json.RawMessage when anything changed.
func (s *scrubber) structured(v any, h *hits) (any, bool, error) {
	if v == nil {
		return v, false, nil
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return v, false, nil // unencodable: the adapter fails the call
		}
		raw = b
	}
	if !s.anyHint(raw) {
		return v, false, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return nil, false, err
	}
	tree, changed := s.walk(tree, h)
	if !changed {
		return v, false, nil
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return nil, false, err
	}
	return json.RawMessage(b), true, nil
}

func (s *scrubber) anyHint(raw []byte) bool {
	for i := range s.rules {
		r := &s.rules[i]
		if len(r.Hints) == 0 {
			return true
		}
		for _, hint := range r.Hints {
			if bytes.Contains(raw, []byte(hint)) {
				return true
			}
		}
	}
	return false
}

func (s *scrubber) walk(v any, h *hits) (any, bool) {
	switch v := v.(type) {
	case string:
		return s.text(v, h)
	case []any:
		changed := false
		for i, e := range v {
			if n, ok := s.walk(e, h); ok {
				v[i], changed = n, true
			}
		}
		return v, changed
	case map[string]any:
		changed := false
		for k, e := range v {
			if n, ok := s.walk(e, h); ok {
				v[k], changed = n, true
			}
		}
		return v, changed
	}
	return v, false
}
