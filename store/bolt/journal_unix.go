//go:build unix

package bolt

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corehq/core/store"
)

// lockFile takes an exclusive lock of f (flock), waiting up to timeout
// (zero: forever) while another process holds it.
func lockFile(f *os.File, timeout time.Duration) error {
	start := time.Now()
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("bolt: locking %s: %w", f.Name(), err)
		}
		if timeout > 0 && time.Since(start) > timeout {
			return fmt.Errorf("bolt: %s locked by another process: %w", f.Name(), store.ErrUnavailable)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
