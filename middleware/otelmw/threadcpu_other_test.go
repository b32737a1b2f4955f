//go:build !linux

package otelmw_test

import "time"

// threadCPU is not measured here: BenchmarkOverhead's -cpu-ns metrics are 0.
func threadCPU() time.Duration { return 0 }
