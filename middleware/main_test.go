package middleware_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The interceptors start no goroutines; tests (Timeout, concurrency) may.
// None may outlive the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
