// Package procstatus reads the "Key:   123 kB" figures Linux keeps of a
// process in /proc (VmHWM, VmRSS and VmData of status, Pss of
// smaps_rollup).
package procstatus

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// KB returns the figure key of the /proc file at path, in kB.
func KB(path, key string) (int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != key {
			continue
		}
		return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in %s", key, path)
}

// Self returns a figure of this process's /proc/self/status in bytes.
func Self(key string) (int64, error) {
	kb, err := KB("/proc/self/status", key)
	return kb << 10, err
}
