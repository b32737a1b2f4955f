package middleware

// TimeoutWithClock is Timeout reading the given clock.
var TimeoutWithClock = timeout

// RoundsWithClock is Rounds reading the given clock.
var RoundsWithClock = roundsWithClock
