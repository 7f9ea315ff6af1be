package mongo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo/mongotest"
)

// TestConcurrentUpserts: 100 concurrent upserts of one id, each setting a
// different field, make one record holding all 100 fields, and exactly one
// of them reports the create.
func TestConcurrentUpserts(t *testing.T) {
	t.Parallel()
	s := mongotest.Open(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const n = 100
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Write(ctx, "inst1", []store.Op{{
				Kind: store.OpUpsert, Type: "Book", ID: "one", Now: now,
				Set: map[string]any{fmt.Sprintf("f%03d", i): int64(i)},
			}}, store.Quota{})
			if err != nil {
				t.Errorf("upsert %d: %v", i, err)
				return
			}
			created[i] = res[0].Created
		}()
	}
	wg.Wait()
	r, err := s.Get(ctx, "inst1", "Book", "one")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Fields) != n {
		t.Errorf("the record holds %d fields, want %d", len(r.Fields), n)
	}
	for i := range n {
		if v := r.Fields[fmt.Sprintf("f%03d", i)]; v != int64(i) {
			t.Errorf("f%03d = %v, want %d", i, v, i)
		}
	}
	creates := 0
	for _, c := range created {
		if c {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("%d upserts report the create, want 1", creates)
	}
	recs, err := s.Find(ctx, "inst1", &store.Query{Type: "Book"})
	if err != nil || len(recs) != 1 {
		t.Errorf("Find = %d records, %v; want one record", len(recs), err)
	}
}
