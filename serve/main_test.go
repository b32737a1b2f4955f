package serve

import (
	"testing"

	"go.uber.org/goleak"
)

// No writer, spool or server goroutine outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
