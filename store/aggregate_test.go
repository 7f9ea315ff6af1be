package store

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
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

// TestAccumulatorMemory: the bytes the accumulator counts against
// MaxBytes follow the heap its groups and distinct values really hold,
// for the shapes that hold the most (a group per record, several fields,
// distinct values in few groups or in many): the estimate is within a
// quarter of the heap held, and never under it by more than that. Not
// parallel: it reads the heap of the whole process.
func TestAccumulatorMemory(t *testing.T) {
	for _, c := range []struct {
		name   string
		fields []AggField
		groups int
	}{
		{"count", nil, 50_000},
		{"one field", []AggField{{Field: "price"}}, 50_000},
		{"distinct", []AggField{{Field: "author", Distinct: true}}, 50_000},
		{"two distinct", []AggField{{Field: "author", Distinct: true}, {Field: "price", Distinct: true}}, 50_000},
		{"distinct in few groups", []AggField{{Field: "author", Distinct: true}}, 10},
	} {
		q := &AggQuery{Type: "Book", Fields: c.fields, GroupBy: []GroupKey{{Field: "title"}}, MaxDistinct: 1 << 30, MaxBytes: 1 << 40}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		acc := NewAccumulator(q)
		for i := range 2 * 50_000 {
			r := &Record{Fields: map[string]any{
				"title":  fmt.Sprintf("title of book number %06d", i%c.groups),
				"author": fmt.Sprintf("author %06d", i),
				"price":  float64(i),
			}}
			if err := acc.Add(r); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("%s: %.1f MiB held, %.1f MiB estimated", c.name, float64(held)/(1<<20), float64(acc.bytes)/(1<<20))
		if acc.bytes < held*3/4 || acc.bytes > held*5/4 {
			t.Errorf("%s: the accumulator estimated %d bytes; the heap held %d", c.name, acc.bytes, held)
		}
		runtime.KeepAlive(acc)
		acc.Release()
	}
}

// TestAccumulatorByteBound: a grouping past MaxBytes stops at the bound
// (the groups and values kept never pass it), names it, and gives back
// what it took of a shared budget; past the shared budget an aggregation
// fails with ErrAggregateMemory, and the budget is whole again after.
// Hostile checklist 48: high-cardinality groupBy and distinct are
// bounded before memory grows.
func TestAccumulatorByteBound(t *testing.T) {
	shared := NewAggMemory(4 << 20)
	q := &AggQuery{Type: "Book", GroupBy: []GroupKey{{Field: "title"}}, Fields: []AggField{{Field: "author", Distinct: true}},
		MaxBytes: 1 << 20, Shared: shared}
	acc := NewAccumulator(q)
	var err error
	n := 0
	for ; err == nil && n < 1_000_000; n++ {
		err = acc.Add(&Record{Fields: map[string]any{"title": fmt.Sprintf("t%07d", n), "author": fmt.Sprintf("a%07d", n)}})
	}
	var be *BoundError
	if !errors.As(err, &be) || !strings.Contains(be.Msg, "more than 1 MiB") {
		t.Fatalf("after %d records: %v, want a BoundError naming 1 MiB", n, err)
	}
	if acc.bytes > q.MaxBytes || n > 2000 {
		t.Errorf("stopped after %d records holding %d bytes, past the bound of %d", n, acc.bytes, q.MaxBytes)
	}
	if shared.Used() == 0 {
		t.Error("the aggregation took nothing of the shared budget")
	}
	acc.Release()
	if shared.Used() != 0 {
		t.Errorf("after Release the shared budget holds %d bytes", shared.Used())
	}

	// Two aggregations each within its own bound but not within the
	// shared budget together: the second stops.
	q.MaxBytes = 3 << 20
	first, second := NewAccumulator(q), NewAccumulator(q)
	for i := range 2000 {
		if err := first.Add(&Record{Fields: map[string]any{"title": fmt.Sprintf("t%07d", i), "author": "a"}}); err != nil {
			t.Fatal(err)
		}
	}
	err = nil
	for i := 0; err == nil && i < 1_000_000; i++ {
		err = second.Add(&Record{Fields: map[string]any{"title": fmt.Sprintf("t%07d", i), "author": "a"}})
	}
	if !errors.Is(err, ErrAggregateMemory) || !strings.Contains(err.Error(), "4 MiB") {
		t.Errorf("the second aggregation: %v, want ErrAggregateMemory naming 4 MiB", err)
	}
	second.Release()
	if got := len(first.Groups()); got != 2000 {
		t.Errorf("the first aggregation has %d groups, want 2000", got)
	}
	if shared.Used() != 0 {
		t.Errorf("after both ended the shared budget holds %d bytes", shared.Used())
	}
}
