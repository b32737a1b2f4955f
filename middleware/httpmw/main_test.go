package httpmw_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests start HTTP servers and mcp-go clients; none of their
// goroutines may outlive the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
