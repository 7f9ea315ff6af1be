package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBucketRangeRoundTrips(t *testing.T) {
	t.Parallel()
	for i := range nBuckets - 1 {
		lo, hi := bucketRange(i)
		if lo > hi || bucketOf(lo) != i || bucketOf(hi) != i {
			t.Fatalf("bucket %d: range [%d, %d] maps to buckets %d and %d", i, lo, hi, bucketOf(lo), bucketOf(hi))
		}
		if next, _ := bucketRange(i + 1); next != hi+1 {
			t.Fatalf("bucket %d ends at %d but bucket %d starts at %d", i, hi, i+1, next)
		}
	}
	if got := bucketOf(math.MaxInt64); got != nBuckets-1 {
		t.Errorf("the largest value lands in bucket %d, want the last (%d)", got, nBuckets-1)
	}
}

// exact is the nearest-rank percentile of sorted values.
func exact(sorted []int64, p float64) int64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

func TestPercentiles(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		gen  func() int64
		n    int
	}{
		{"exponential around 2 ms", func() int64 { return int64(rng.ExpFloat64() * 2e6) }, 20000},
		{"bimodal 50 µs and 300 ms", func() int64 {
			if rng.IntN(10) == 0 {
				return 300e6 + rng.Int64N(1e6)
			}
			return 50e3 + rng.Int64N(1e3)
		}, 5000},
		{"tiny values, exact buckets", func() int64 { return rng.Int64N(200) }, 1000},
		{"one value", func() int64 { return 1234567 }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h histogram
			vals := make([]int64, tc.n)
			for i := range vals {
				vals[i] = tc.gen()
				h.record(time.Duration(vals[i]))
			}
			slices.Sort(vals)
			for _, p := range []float64{1, 50, 95, 99, 99.9, 100} {
				want, got := exact(vals, p), int64(h.percentile(p))
				if tol := float64(want)/subCount + 1; math.Abs(float64(got-want)) > tol {
					t.Errorf("p%v = %d ns, want %d ± %.0f", p, got, want, tol)
				}
			}
			if h.count() != uint64(tc.n) {
				t.Errorf("count %d, want %d", h.count(), tc.n)
			}
		})
	}
}

func TestHistogramMergeAndEmpty(t *testing.T) {
	t.Parallel()
	var empty histogram
	if empty.percentile(50) != 0 || empty.mean() != 0 {
		t.Error("an empty histogram should answer 0")
	}
	var a, b, all histogram
	for i := range 1000 {
		d := time.Duration(i*i) * time.Microsecond
		all.record(d)
		if i%3 == 0 {
			a.record(d)
		} else {
			b.record(d)
		}
	}
	a.merge(&b)
	a.merge(&empty)
	if a.counts != all.counts || a.n != all.n || a.min != all.min || a.max != all.max {
		t.Fatal("merging two halves differs from recording everything in one")
	}
	if a.percentile(100) != time.Duration(all.max) || a.percentile(0.0001) != 0 {
		t.Errorf("p100 = %v (want the maximum %v), p0.0001 = %v (want 0)", a.percentile(100), time.Duration(all.max), a.percentile(0.0001))
	}
}

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
