//go:build !unix

package audit

import "os"

// lockFile does nothing where flock is not available: one process per
// spool directory is then the user's duty.
func lockFile(*os.File) error { return nil }
