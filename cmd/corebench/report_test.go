package main

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFormatTable(t *testing.T) {
	t.Parallel()
	rows := []row{
		{name: "a_get_book", requests: 20000, rps: 8482.9, p50: 3730 * time.Microsecond, p95: 7700 * time.Microsecond,
			p99: 62020 * time.Microsecond, cpuPerReq: 0.1174, rssKB: 48 * 1024, otherPct: 1.4},
		{name: "f_login_password", requests: 512, rps: 13.21, p50: 2258440 * time.Microsecond, p95: 2792 * time.Millisecond,
			p99: 2890 * time.Millisecond, cpuPerReq: 75.879, rssKB: 1037 * 1024, failed: 2, otherPct: 0},
		{name: "remote", requests: 10, rps: 100, cpuPerReq: math.NaN(), rssKB: -1, otherPct: math.NaN()},
	}
	want := tableHeader +
		"| a_get_book | 20,000 | 8,483 | 3.73 | 7.70 | 62.0 | 0.117 | 48.0 | 0 | 1 |\n" +
		"| f_login_password | 512 | 13.2 | 2,258 | 2,792 | 2,890 | 75.9 | 1037.0 | 2 | 0 |\n" +
		"| remote | 10 | 100 | 0.00 | 0.00 | 0.00 | - | - | 0 | - |\n"
	if diff := cmp.Diff(want, formatTable(rows)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNumberFormats(t *testing.T) {
	t.Parallel()
	cases := []struct{ got, want string }{
		{fmtInt(0), "0"},
		{fmtInt(999), "999"},
		{fmtInt(1000), "1,000"},
		{fmtInt(1234567), "1,234,567"},
		{fmtInt(-1234), "-1,234"},
		{fmtRate(99.94), "99.9"},
		{fmtRate(17000.4), "17,000"},
		{fmtMS(9999 * time.Microsecond), "10.00"},
		{fmtMS(12345 * time.Microsecond), "12.3"},
		{fmtMS(1234567 * time.Microsecond), "1,235"},
		{fmtCPU(0.0154), "0.015"},
		{fmtCPU(75.88), "75.9"},
		{fmtMB(47 * 1024), "47.0 MB"},
		{fmtMB(-1), "-"},
		{perItem(2048, 1000), "2.05 KiB"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestFloorRatio(t *testing.T) {
	rows := []row{{name: scGetBook, cpuPerReq: 0.06}, {name: scFloor, cpuPerReq: 0.015}}
	if got := floorRatio(rows); got != "GET by id costs 4.0× the floor (z_floor_healthz), in server CPU per request.\n" {
		t.Errorf("floorRatio = %q", got)
	}
	if got := floorRatio(rows[:1]); got != "" {
		t.Errorf("without the floor: %q", got)
	}
	if got := floorRatio([]row{{name: scGetBook, cpuPerReq: math.NaN()}, {name: scFloor, cpuPerReq: 0.01}}); got != "" {
		t.Errorf("unmeasured: %q", got)
	}
}
