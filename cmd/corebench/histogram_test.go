package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
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
