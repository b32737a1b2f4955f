// Package httpwrap is toolmw's one http.ResponseWriter wrapper: it learns
// the response's status and may replace it before it is written, and the
// writer it returns has exactly the optional interfaces of the writer it
// wraps (http.Flusher, http.Hijacker, io.ReaderFrom, http.Pusher), plus
// Unwrap for http.ResponseController. The interface juggling is
// github.com/felixge/httpsnoop's.
package httpwrap
