package middleware

// TimeoutWithClock is Timeout reading the given clock.
var TimeoutWithClock = timeout
