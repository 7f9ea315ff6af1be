//go:build !unix

package bolt

import (
	"os"
	"time"
)

// lockFile does nothing where there is no flock: there, bbolt's own lock
// of the store's file, taken after the journal's replay, is the only one.
func lockFile(*os.File, time.Duration) error { return nil }
