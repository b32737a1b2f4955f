//go:build !race

package bench

// raceEnabled: this test binary has the race detector.
const raceEnabled = false
