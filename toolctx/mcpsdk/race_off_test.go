//go:build !race

package mcpsdk

const raceEnabled = false
