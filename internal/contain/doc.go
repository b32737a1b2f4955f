// Package contain runs a function so that neither a panic nor a
// runtime.Goexit in it ends the caller's goroutine. Both adapters run the
// tool chain through it: a Goexit (what t.FailNow does) on an SDK's
// goroutine would leave the request unanswered for good.
package contain
