package main

import (
	"math"
	"math/bits"
	"time"
)

// The latency histogram is log-linear, in the manner of HdrHistogram:
// values below 2·subCount nanoseconds have a bucket each, and every power
// of two above is split into subCount buckets, so any recorded value and
// the bucket it falls in differ by less than 1/subCount (0.8 %).
const (
	subBits  = 7
	subCount = 1 << subBits
	// maxShift bounds the range: values from 2^(maxShift+subBits+1) ns
	// (about 18 minutes) on share the last bucket.
	maxShift = 32
	nBuckets = 2*subCount + maxShift*subCount
)

// histogram counts latencies. Not safe for concurrent use: each load
// worker records into its own and the results are merged.
type histogram struct {
	counts   [nBuckets]uint64
	n        uint64
	min, max int64
	sum      float64 // nanoseconds, for the mean
}

// bucketOf returns the bucket of v nanoseconds.
func bucketOf(v int64) int {
	if v < 2*subCount {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - subBits - 1 // ≥ 1
	if shift > maxShift {
		return nBuckets - 1
	}
	return 2*subCount + (shift-1)*subCount + int(v>>shift) - subCount
}

// bucketRange returns the smallest and largest value of bucket i.
func bucketRange(i int) (lo, hi int64) {
	if i < 2*subCount {
		return int64(i), int64(i)
	}
	shift := (i-2*subCount)/subCount + 1
	m := int64((i-2*subCount)%subCount + subCount)
	return m << shift, (m+1)<<shift - 1
}

// record adds one latency.
func (h *histogram) record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
	h.counts[bucketOf(v)]++
}

// merge adds o's counts to h.
func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

// count is the number of latencies recorded.
func (h *histogram) count() uint64 { return h.n }

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100): the
// middle of the bucket holding the ⌈p/100·n⌉-th smallest latency, kept
// within the recorded minimum and maximum; the maximum itself for the
// last rank. 0 when nothing was recorded.
func (h *histogram) percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(h.n)))
	rank = max(rank, 1)
	if rank >= h.n {
		return time.Duration(h.max)
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(i)
			v := lo + (hi-lo)/2
			v = max(v, h.min)
			v = min(v, h.max)
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}

// mean is the average latency.
func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}
