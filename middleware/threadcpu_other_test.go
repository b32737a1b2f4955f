//go:build !linux

package middleware_test

import "time"

// threadCPU is not measured here: the -cpu-ns metrics are 0.
func threadCPU() time.Duration { return 0 }
