//go:build !linux

package bolt

import (
	"io"
	"os"
)

// newWriteback writes a content as it is: only Linux starts the
// writing of its pages early (writeback_linux.go).
func newWriteback(f *os.File) io.Writer { return f }

// syncData flushes f to the disk.
func syncData(f *os.File) error { return f.Sync() }
