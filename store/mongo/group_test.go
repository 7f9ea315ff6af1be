package mongo

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGroup: concurrent callers of one group each find their work in a
// batch that was flushed exactly once, and the flushes (with their
// after work) never overlap.
func TestGroup(t *testing.T) {
	t.Parallel()
	type val struct {
		work    []int
		flushed int // times flushed
	}
	var g group[val]
	var busy atomic.Int32 // flushes and after work under way
	var flushes atomic.Int32
	const callers = 200
	got := make([]*val, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var after func(*val)
			if i%2 == 0 {
				after = func(*val) {
					if busy.Add(1) != 1 {
						t.Error("after work overlaps a flush")
					}
					busy.Add(-1)
				}
			}
			got[i] = g.do(func(v *val) { v.work = append(v.work, i) }, func(v *val) {
				if busy.Add(1) != 1 {
					t.Error("two flushes overlap")
				}
				v.flushed++
				flushes.Add(1)
				busy.Add(-1)
			}, after)
		}()
	}
	wg.Wait()
	batches := map[*val]bool{}
	for i, v := range got {
		if v.flushed != 1 {
			t.Errorf("caller %d: its batch was flushed %d times", i, v.flushed)
		}
		if !slices.Contains(v.work, i) {
			t.Errorf("caller %d: its batch %v lacks its work", i, v.work)
		}
		batches[v] = true
	}
	var all []int
	for v := range batches {
		all = append(all, v.work...)
	}
	slices.Sort(all)
	if len(all) != callers || all[0] != 0 || all[callers-1] != callers-1 || len(slices.Compact(all)) != callers {
		t.Errorf("the batches hold %d pieces of work, want each of %d once", len(all), callers)
	}
	if n := flushes.Load(); int(n) != len(batches) {
		t.Errorf("%d flushes of %d batches", n, len(batches))
	}
}
