//go:build !race

package mcpgo

const raceEnabled = false
