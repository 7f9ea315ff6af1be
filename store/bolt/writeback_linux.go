package bolt

import (
	"os"

	"golang.org/x/sys/unix"
)

// writeback starts writing a content's pages to the disk every
// writebackEvery bytes, without waiting for them, so that the sync at
// the end of a Put waits for the last few only, not for the whole
// content (which would double an upload's time).
type writeback struct {
	f          *os.File
	from, upTo int64
}

// writebackEvery is how many bytes a content gathers before they are
// sent to the disk.
const writebackEvery = 8 << 20

func newWriteback(f *os.File) *writeback { return &writeback{f: f} }

func (w *writeback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.upTo += int64(n)
	if w.upTo-w.from >= writebackEvery {
		// Only a hint: a failure shows in the sync that follows.
		_ = unix.SyncFileRange(int(w.f.Fd()), w.from, w.upTo-w.from, unix.SYNC_FILE_RANGE_WRITE)
		w.from = w.upTo
	}
	return n, err
}

// syncData flushes f's data, and the metadata needed to read it, to the
// disk (fdatasync).
func syncData(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
