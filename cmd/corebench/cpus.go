package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// parseCPUs reads a CPU list as taskset takes it: "0", "1-3", "0,2-3".
// The empty string is the empty list.
func parseCPUs(s string) ([]int, error) {
	var cpus []int
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(item, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= maxCPUs {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number or range (like 0, 1-3)", s, item)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// formatCPUs writes a CPU list for taskset -c: "0,1,3".
func formatCPUs(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// maxCPUs bounds the CPU numbers the affinity masks hold.
const maxCPUs = 1024
