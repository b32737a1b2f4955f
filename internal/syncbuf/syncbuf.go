package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer whose methods may be called from many
// goroutines at once. The zero Buffer is empty and ready to use; a Buffer
// must not be copied once used.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what has been written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
