package toolctx_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

type fuzzIn struct {
	Name   string            `json:"name"`
	Count  int               `json:"count"`
	Small  int8              `json:"small"`
	Ratio  float64           `json:"ratio"`
	Ok     bool              `json:"ok"`
	Tags   []string          `json:"tags"`
	Labels map[string]string `json:"labels"`
	When   time.Time         `json:"when"`
	Nested *struct {
		Depth uint `json:"depth"`
	} `json:"nested"`
	Any any `json:"any"`
}

// FuzzDecodeArguments feeds random bytes to the typed decoder: it never
// panics, and every error is an *errs.Error with CodeInvalidArguments.
func FuzzDecodeArguments(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `1`, `{"name":"a","count":1}`,
		`{"count":"x"}`, `{"small":300}`, `{"count":1.5}`, `{"unknown":1}`,
		`{"tags":[1,2]}`, `{"labels":{"a":1}}`, `{"when":"not a time"}`,
		`{"nested":{"depth":-1}}`, `{"name":"a"} trailing`, `{"name":"a"}{}`,
		`{"name":`, `{"name":"\ud800"}`, `{"ratio":1e999}`, `{"any":[{"a":null}]}`,
		"\xff\xfe", `{"name":"a",}`, ` { "ok" : true } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var in fuzzIn
		err := toolctx.DecodeArguments(json.RawMessage(raw), &in)
		if err == nil {
			return
		}
		var e *errs.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T %v is not an *errs.Error", err, err)
		}
		if e.Code() != errs.CodeInvalidArguments {
			t.Fatalf("code %q, want invalid_arguments", e.Code())
		}
		pub, scrubbed := errs.Normalize(err)
		if scrubbed || pub.Code != errs.CodeInvalidArguments || pub.Message == "" {
			t.Fatalf("public envelope %+v (scrubbed %v)", pub, scrubbed)
		}
		if _, jerr := json.Marshal(pub); jerr != nil {
			t.Fatalf("the public envelope does not encode: %v", jerr)
		}
	})
}
