//go:build unix

package gql

import "syscall"

// cpuTime returns the process's user and system CPU time in nanoseconds:
// benchmarks report it per operation, as the load harness reports server
// CPU per request, because wall time on a shared machine varies with
// everything else running.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
