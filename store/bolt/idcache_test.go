package bolt

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
)

// TestIDCache checks that an IDsOnly answer is served again until a write,
// and that the answer after the write includes it.
func TestIDCache(t *testing.T) {
	s := openTemp(t, testConfig())
	ctx := context.Background()
	const inst = "idc"
	loadItems(t, s, inst, 300)
	run := func(q *store.Query) ([]string, planInfo) {
		t.Helper()
		recs, info := mustFind(t, s, inst, q)
		return ids(recs), info
	}
	q := itemQuery(t, inst, "price >= 98")
	q.IDsOnly, q.Limit, q.After = true, 100, itemID(98)
	first, info1 := run(q)
	second, info2 := run(q)
	if info1.Cached || !info2.Cached {
		t.Errorf("cached: first %v, second %v; want false, true", info1.Cached, info2.Cached)
	}
	if want := []string{itemID(99), itemID(198), itemID(199), itemID(298), itemID(299)}; !cmp.Equal(first, want) || !cmp.Equal(second, want) {
		t.Errorf("answers %v and %v, want %v", first, second, want)
	}
	other := *q
	other.Limit = 3
	if got, info := run(&other); info.Cached || len(got) != 3 {
		t.Errorf("another limit: cached %v, %d ids; want a query of its own with 3", info.Cached, len(got))
	}

	if _, err := s.Write(ctx, inst, []store.Op{{Kind: store.OpUpsert, Type: "Item", ID: itemID(500), Now: base,
		Set: map[string]any{"n": int64(500), "price": 99.0, "title": "t00500"}}}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	third, info3 := run(q)
	if info3.Cached || len(third) != 6 || third[5] != itemID(500) {
		t.Errorf("after a write: cached %v, %v; want the new record at the end", info3.Cached, third)
	}
	full := *q
	full.IDsOnly = false
	if _, info := run(&full); info.Cached {
		t.Error("a query without IDsOnly was served from the id cache")
	}
}

// TestIDCacheReadsItsWrites races writers against IDsOnly readers: once a
// write returns, every IDsOnly query sees it.
func TestIDCacheReadsItsWrites(t *testing.T) {
	s := openTemp(t, testConfig())
	ctx := context.Background()
	const inst = "idw"
	loadItems(t, s, inst, 10)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				id := fmt.Sprintf("w%d-%02d", w, i)
				if _, err := s.Write(ctx, inst, []store.Op{{Kind: store.OpUpsert, Type: "Item", ID: id, Now: base,
					Set: map[string]any{"n": int64(1000 + w), "title": id}}}, store.Quota{}); err != nil {
					t.Error(err)
					return
				}
				// One query for all: an answer one writer's read keeps
				// must not hide another's write.
				q := itemQuery(t, inst, "n >= 1000")
				q.IDsOnly, q.Limit = true, 1000
				recs, err := s.Find(ctx, inst, q)
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.ContainsFunc(recs, func(r *store.Record) bool { return r.ID == id }) {
					t.Errorf("writer %d after its write %d: %d ids without %s", w, i, len(recs), id)
					return
				}
			}
		}()
	}
	wg.Wait()
}
