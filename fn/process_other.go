//go:build !linux

package fn

import (
	"os"
)

// workerExecutable is the binary worker processes run.
var workerExecutable, _ = os.Executable()

// limitData is a no-op where RLIMIT_DATA does not bound the Go heap: the
// worker's memory watch (watchMemory) is the only bound there.
func limitData(int64) error { return nil }

func blockingPipe() (r, w *os.File, err error) { return os.Pipe() }
