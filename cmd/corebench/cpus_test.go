package main

import (
	"slices"
	"testing"
)

func TestParseCPUs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0", []int{0}, true},
		{"1-3", []int{1, 2, 3}, true},
		{"3,0-1, 1", []int{0, 1, 3}, true},
		{"", nil, true},
		{"a", nil, false},
		{"3-1", nil, false},
		{"-1", nil, false},
		{"5000", nil, false},
	}
	for _, tc := range cases {
		got, err := parseCPUs(tc.in)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("parseCPUs(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if got := formatCPUs([]int{0, 2, 3}); got != "0,2,3" {
		t.Errorf("formatCPUs = %q", got)
	}
}
