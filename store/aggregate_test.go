package store

import (
	"runtime"
	"testing"
)

// BenchmarkAccumulator streams 1,000,000 records into 100,000 groups (a
// count and one field's count, sum, avg, min and max per group) and
// reports the memory the groups hold when the last record is in: the
// records are never held, so this is the whole of an aggregation's
// memory beside the store's read buffers.
//
//	go test -run '^$' -bench BenchmarkAccumulator -benchtime 1x ./store/
func BenchmarkAccumulator(b *testing.B) {
	const records, groups = 1_000_000, 100_000
	for range b.N {
		q := &AggQuery{Type: "Book", Fields: []AggField{{Field: "price"}}, GroupBy: []GroupKey{{Field: "authorid"}}}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		acc := NewAccumulator(q)
		r := &Record{Fields: map[string]any{}}
		for i := range records {
			r.Fields["authorid"] = int64(i % groups)
			r.Fields["price"] = float64(i%10000) / 100
			if err := acc.Add(r); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-held")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/groups, "B/group")
		if got := len(acc.Groups()); got != groups {
			b.Fatalf("%d groups, want %d", got, groups)
		}
	}
}

// TestAccumulatorBounds: the default bound on groups holds, and the
// error names it.
func TestAccumulatorBounds(t *testing.T) {
	acc := NewAccumulator(&AggQuery{Type: "Book", GroupBy: []GroupKey{{Field: "n"}}})
	r := &Record{Fields: map[string]any{}}
	var err error
	n := 0
	for ; n <= DefaultMaxGroups && err == nil; n++ {
		r.Fields["n"] = int64(n)
		err = acc.Add(r)
	}
	if n != DefaultMaxGroups+1 || err == nil || err.Error() != "aggregate: more than 100000 groups; narrow where, or group by fewer or coarser keys" {
		t.Errorf("after %d records: %v", n, err)
	}
}
