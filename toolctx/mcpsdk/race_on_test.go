//go:build race

package mcpsdk

// raceEnabled: this test binary has the race detector, whose sync.Pool
// drops what it is given at random (json.Valid pools its scanner), so an
// allocation count is not measured under it.
const raceEnabled = true
