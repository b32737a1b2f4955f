// Package syncbuf is a bytes.Buffer safe for concurrent use, for tests
// that hand a writer to a logger (or a server) and read what it wrote
// while it may still be writing.
package syncbuf
