package fn

import (
	"os"
	"syscall"

	"github.com/corehq/core/internal/procstatus"
)

// workerExecutable is the binary worker processes run: this one, even
// when its file was replaced since it started.
const workerExecutable = "/proc/self/exe"

// limitData sets the process's RLIMIT_DATA (private writable memory, the
// Go heap included) to what it uses now plus extra bytes: past it the
// kernel refuses memory and the Go runtime ends the process.
func limitData(extra int64) error {
	used, err := procstatus.Self("VmData")
	if err != nil {
		return err
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &lim); err != nil {
		return err
	}
	want := uint64(used + extra)
	if want > lim.Max {
		want = lim.Max
	}
	lim.Cur = want
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &lim)
}

// blockingPipe returns a pipe whose ends block in read and write rather
// than going through the network poller.
func blockingPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}
