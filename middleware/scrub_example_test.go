package middleware_test

import (
	"context"
	"fmt"
	"regexp"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleScrubSecrets() {
	scrub := middleware.ScrubSecrets(middleware.ScrubConfig{Rules: []middleware.ScrubRule{
		{Name: "employee_id", Pattern: regexp.MustCompile(`EMP-[0-9]{6}`), Hints: []string{"EMP-"}},
	}})
	h, _ := middleware.New(scrub).ThenFunc(func(context.Context, *toolctx.Request) *toolctx.CallResult {
		return toolctx.TextResult("connected to postgres://app:s3cr3t@db:5432/app as EMP-004217")
	})
	res := h.CallTool(context.Background(), &toolctx.Request{Tool: "diagnose"})
	fmt.Println(res.Content[0].(*toolctx.Text).Text)
	fmt.Println(res.Notes()) // for the audit row: which rules, never the secret
	// Output:
	// connected to postgres://app:[redacted:connection_string]@db:5432/app as [redacted:employee_id]
	// [{scrubbed connection_string,employee_id}]
}
