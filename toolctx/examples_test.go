package toolctx_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw/errs"
	"github.com/toolmw/toolmw/toolctx"
)

func ExampleTyped() {
	type In struct {
		City string `json:"city"`
	}
	type Out struct {
		Forecast string `json:"forecast"`
	}
	h := toolctx.Typed(func(ctx context.Context, req *toolctx.Request, in In) (Out, error) {
		if in.City == "" {
			return Out{}, errs.InvalidArguments("city is required")
		}
		return Out{Forecast: "sunny in " + in.City}, nil
	})

	ok := h.CallTool(context.Background(), &toolctx.Request{Tool: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)})
	fmt.Println(ok.IsError, ok.Content[0].(*toolctx.Text).Text)

	bad := h.CallTool(context.Background(), &toolctx.Request{Tool: "weather", Arguments: json.RawMessage(`{"city":42}`)})
	bad = toolctx.Normalized(context.Background(), bad, errs.Normalizer{})
	fmt.Println(bad.IsError, bad.Error.Code, "|", bad.Error.Message)
	// Output:
	// false {"forecast":"sunny in Paris"}
	// true invalid_arguments | invalid arguments: field "city" must be a string, got number
}
