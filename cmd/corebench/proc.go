package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/corehq/core/internal/procstatus"
)

// What the harness reads of /proc (Linux): the server's CPU time and
// memory, and the CPU time of every other process (someone else's job
// disturbs a measurement on a shared machine; the table says how much).

// clockTicks is USER_HZ, the unit of the CPU times in /proc: AT_CLKTCK of
// the process's auxiliary vector, 100 when that cannot be read.
func clockTicks() float64 {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil || strconv.IntSize != 64 {
		return 100
	}
	const atClkTck = 17
	for i := 0; i+16 <= len(b); i += 16 {
		k, v := binary.NativeEndian.Uint64(b[i:]), binary.NativeEndian.Uint64(b[i+8:])
		if k == atClkTck && v > 0 {
			return float64(v)
		}
		if k == 0 {
			break
		}
	}
	return 100
}

// statFields returns the fields of /proc/<pid>/stat after the command
// name (which may hold spaces): fields[0] is the state, fields[11] utime,
// fields[12] stime, fields[13] cutime, fields[14] cstime.
func statFields(b []byte) ([][]byte, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("no command name in a /proc stat line")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 15 {
		return nil, errors.New("short /proc stat line")
	}
	return f, nil
}

// procCPU returns the CPU time (user + system) pid used, in clock ticks.
func procCPU(pid int) (int64, error) { return cpuOf([]int{pid}, false) }

// treeCPU is procCPU with the CPU time of pid's children: running ones
// (cored's function worker processes) and those it has reaped.
func treeCPU(pid int) (int64, error) { return cpuOf(family(pid), true) }

// cpuOf sums the CPU time of pids (the first one's reaped children too
// when reaped is set); only the first must exist.
func cpuOf(pids []int, reaped bool) (int64, error) {
	var total int64
	for i, p := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			if i == 0 {
				return 0, err
			}
			continue // a child that exited meanwhile: its time is in cutime now or soon
		}
		f, err := statFields(b)
		if err != nil {
			return 0, err
		}
		fields := []int{11, 12} // utime, stime
		if i == 0 && reaped {
			fields = append(fields, 13, 14) // cutime, cstime
		}
		for _, k := range fields {
			v, err := strconv.ParseInt(string(f[k]), 10, 64)
			if err != nil {
				return 0, err
			}
			total += v
		}
	}
	return total, nil
}

// family returns pid and its running children (from
// /proc/<pid>/task/*/children, where the kernel has it).
func family(pid int) []int {
	pids := []int{pid}
	lists, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				pids = append(pids, c)
			}
		}
	}
	return pids
}

// procAlive reports whether pid runs (and is not a zombie).
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f, err := statFields(b)
	return err == nil && string(f[0]) != "Z"
}

// procStatusKB returns a kB field of /proc/<pid>/status (VmRSS, VmHWM).
func procStatusKB(pid int, key string) (int64, error) {
	return procstatus.KB(fmt.Sprintf("/proc/%d/status", pid), key)
}

// procRollupKB returns a kB field of /proc/<pid>/smaps_rollup (Pss).
func procRollupKB(pid int, key string) (int64, error) {
	return procstatus.KB(fmt.Sprintf("/proc/%d/smaps_rollup", pid), key)
}

// othersCPU sums the CPU time (own and of reaped children) of every
// process but those in skip, in clock ticks. Processes that exit between
// two readings take their time with them unless their parent reaps them,
// so this undercounts short-lived work.
func othersCPU(skip ...int) int64 {
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0
	}
	var total int64
	for _, p := range dirs {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || containsInt(skip, pid) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue // it exited meanwhile
		}
		f, err := statFields(b)
		if err != nil {
			continue
		}
		for _, k := range []int{11, 12, 13, 14} {
			v, _ := strconv.ParseInt(string(f[k]), 10, 64)
			total += v
		}
	}
	return total
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// machine describes this machine in one line: CPUs, model, memory, kernel.
func machine() string {
	model, ncpu := "unknown CPU", 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			switch k = strings.TrimSpace(k); {
			case !ok:
			case k == "processor":
				ncpu++
			case k == "model name" && ncpu == 1:
				model = strings.TrimSpace(v)
			}
		}
	}
	if ncpu == 0 {
		ncpu = runtime.NumCPU()
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "MemTotal" {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
			}
		}
	}
	kernel := runtime.GOOS
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d × %s%s, %s", ncpu, model, mem, kernel)
}
