package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/corehq/core/store"
)

// testConcurrency runs writers, readers and unique-value contenders at once
// (run it under -race).
func testConcurrency(t *testing.T, e *env) {
	e.declare(e.inst)
	e.write(upsert("Book", "shared", at(0), map[string]any{"title": "shared"}))
	const workers, each = 8, 25
	// Bound before the goroutines start: only the test's goroutine may fail
	// it with Fatal.
	byPrice := make([]*store.Query, workers)
	for w := range workers {
		byPrice[w] = e.query(e.inst, "Book", fmt.Sprintf("price = %d", w))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%02d", w, i)
				ops := []store.Op{
					upsert("Book", id, at(i), map[string]any{"title": id, "price": float64(w)}),
					upsert("Book", "shared", at(i), map[string]any{fmt.Sprintf("w%d", w): int64(i)}),
				}
				if _, err := e.s.Write(e.ctx, e.inst, ops, store.Quota{}); err != nil {
					t.Errorf("worker %d: Write: %v", w, err)
					return
				}
				if _, err := e.s.Find(e.ctx, e.inst, byPrice[w]); err != nil {
					t.Errorf("worker %d: Find: %v", w, err)
					return
				}
				if _, err := e.s.Get(e.ctx, e.inst, "Book", id); err != nil {
					t.Errorf("worker %d: Get of its own write: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Run("every write landed", func(t *testing.T) {
		if got := e.find(e.inst, &store.Query{Type: "Book"}); len(got) != workers*each+1 {
			t.Errorf("%d records, want %d", len(got), workers*each+1)
		}
		for w := range workers {
			if got := e.findText(e.inst, "Book", fmt.Sprintf("price = %d", w)); len(got) != each {
				t.Errorf("price = %d finds %d records, want %d", w, len(got), each)
			}
		}
		shared := e.get(e.inst, "Book", "shared")
		for w := range workers {
			if v := shared.Fields[fmt.Sprintf("w%d", w)]; v != int64(each-1) {
				t.Errorf("shared.w%d = %v, want %d", w, v, each-1)
			}
		}
	})
	t.Run("unique under contention", func(t *testing.T) {
		won := race(t, 10, store.ErrUnique, func(i int) error {
			_, err := e.s.Write(e.ctx, e.inst, []store.Op{
				upsert("Account", fmt.Sprintf("race%d", i), at(1), map[string]any{"username": "race"}),
			}, store.Quota{})
			return err
		})
		if ok := len(won); ok != 1 {
			t.Errorf("%d writers took the same unique value, want 1", ok)
		}
	})
}
