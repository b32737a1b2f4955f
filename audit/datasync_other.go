//go:build !linux

package audit

import "os"

// datasync makes f's data durable: fsync here (fdatasync is Linux's).
func datasync(f *os.File) error { return f.Sync() }
