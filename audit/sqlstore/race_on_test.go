//go:build race

package sqlstore_test

// raceEnabled: the race detector instruments modernc.org/sqlite's
// transpiled C, which makes it some ten times slower.
const raceEnabled = true
