//go:build unix

package fn

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTime is the user and system CPU time so far of this process and its
// worker processes: those running (read from /proc, where there is one)
// and those ended.
func cpuTime() time.Duration {
	var self, ended syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ended) != nil {
		return 0
	}
	return time.Duration(self.Utime.Nano()+self.Stime.Nano()+ended.Utime.Nano()+ended.Stime.Nano()) + runningChildrenCPU()
}

// runningChildrenCPU sums utime and stime of this process's running
// children (fields 14 and 15 of /proc/<pid>/stat, in clock ticks of
// 1/100 s).
func runningChildrenCPU() time.Duration {
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	var ticks int64
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, pid := range strings.Fields(string(b)) {
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				continue
			}
			s := string(stat)
			fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after the command's name
			if len(fields) < 13 {
				continue
			}
			u, _ := strconv.ParseInt(fields[11], 10, 64)
			k, _ := strconv.ParseInt(fields[12], 10, 64)
			ticks += u + k
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
