package toolmwtest_test

import (
	"fmt"

	"github.com/toolmw/toolmw/toolmwtest"
)

// Generate makes the hostile failures; a tool handler calls one, and the
// canary must then appear nowhere in what the client receives.
func ExampleGenerate() {
	for _, f := range toolmwtest.Generate(1, 4) {
		fmt.Printf("%-8s %s\n", f.Kind, f.Shape)
	}
	// Output:
	// raw      raw errors.New
	// raw      raw error wrapped with %w
	// raw      raw error formatted with %v (no wrapping)
	// raw      errors.Join of noise and the raw error
}

// Scan finds a canary, a Go stack or a source path in what a client
// received, and shows the bytes around it.
func ExampleScan() {
	f := toolmwtest.Generate(7, 1)[0]
	received := `{"content":[{"type":"text","text":"` + f.Call().Error() +
		`\ngoroutine 1 [running]:\nmain.handler()\n\t/srv/app/tools.go:42 +0x1d"}],"isError":true}`
	for _, finding := range toolmwtest.Scan([]byte(received), []string{f.Canary}) {
		fmt.Println(finding.What)
	}
	// Output:
	// canary
	// Go stack
	// source path
}
