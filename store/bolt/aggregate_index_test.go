package bolt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// TestAggregateIndexOnly: aggregations that one index covers are read
// from its entries alone, and give exactly what the records give (the
// reference: Find's records fed to an accumulator), with nulls, whole
// Floats, Int kinds, equality and range bounds; a trashed record
// sends them back to the records until the query includes trashed ones or
// the record is untrashed or deleted.
func TestAggregateIndexOnly(t *testing.T) {
	s := openTemp(t, testConfig())
	ctx := context.Background()
	const inst = "agg"
	spec := store.TypeSpec{Name: "Sale", Indices: [][]string{{"price"}, {"n", "price"}, {"n", "when"}, {"cat"}}}
	if err := s.Declare(ctx, inst, []store.TypeSpec{spec}); err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	var ops []store.Op
	for i := range 400 {
		set := map[string]any{"cat": fmt.Sprintf("c%d", i%4), "title": fmt.Sprintf("t%d", i)}
		if i%9 != 0 {
			set["price"] = float64(rnd.IntN(2000)) / 20 // whole values among them
		}
		if i%11 != 0 {
			set["n"] = int64(rnd.IntN(12) - 3)
		}
		if i%7 != 0 {
			set["when"] = base.Add(time.Duration(rnd.IntN(3*365*24)) * time.Hour).Format(time.RFC3339)
		}
		ops = append(ops, store.Op{Kind: store.OpUpsert, Type: "Sale", ID: itemID(i), Set: set, Now: base})
	}
	if _, err := s.Write(ctx, inst, ops, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	bind := func(text string) arcql.Expr {
		t.Helper()
		pq, err := arcql.Parse(text, arcql.DefaultLimits())
		if err == nil {
			pq, err = arcql.Bind(pq, itemSchema{}, "Sale", inst)
		}
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		return pq.Filter
	}
	ints := []string{"n"}
	cases := []struct {
		name      string
		q         store.AggQuery
		indexOnly bool // the records are not read
	}{
		{"a range on price", store.AggQuery{Filter: bind("price > 50"), Fields: []store.AggField{{Field: "price", Distinct: true}}}, true},
		{"every price", store.AggQuery{Fields: []store.AggField{{Field: "price"}}}, true},
		{"grouped by n", store.AggQuery{GroupBy: []store.GroupKey{{Field: "n", Desc: true}}, Fields: []store.AggField{{Field: "n", Distinct: true}, {Field: "price"}}}, true},
		{"equality on n, grouped by price", store.AggQuery{Filter: bind("n = 3"), GroupBy: []store.GroupKey{{Field: "price"}}, Fields: []store.AggField{{Field: "price"}}}, true},
		{"NOT EXIST and OR", store.AggQuery{Filter: bind("NOT EXIST n OR price >= 80"), Fields: []store.AggField{{Field: "n"}}}, true},
		{"paged groups", store.AggQuery{GroupBy: []store.GroupKey{{Field: "n"}}, Fields: []store.AggField{{Field: "price"}}, First: 3, After: []any{int64(0)}}, true},
		{"times are strings, not in keys whole", store.AggQuery{Filter: bind("n = 3"), GroupBy: []store.GroupKey{{Field: "when", Unit: store.Years}}}, false},
		{"strings are not in keys whole", store.AggQuery{GroupBy: []store.GroupKey{{Field: "cat"}}}, false},
		{"a field of no index", store.AggQuery{Filter: bind("price > 50 AND title = 't3'"), Fields: []store.AggField{{Field: "price"}}}, false},
	}
	check := func(t *testing.T, q store.AggQuery, indexOnly bool) {
		t.Helper()
		q.Type, q.Ints = "Sale", ints
		got, info, err := s.aggregate(ctx, inst, &q)
		if err != nil {
			t.Fatal(err)
		}
		if indexOnly && info.Kind != planIndexOnly {
			t.Errorf("plan %s on %q, want %s", info.Kind, info.Index, planIndexOnly)
		}
		if !indexOnly && info.Kind == planIndexOnly {
			t.Errorf("plan %s on %q, want the records read", info.Kind, info.Index)
		}
		recs, err := s.Find(ctx, inst, &store.Query{Type: "Sale", Filter: q.Filter, IncludeTrashed: q.IncludeTrashed})
		if err != nil {
			t.Fatal(err)
		}
		acc := store.NewAccumulator(&q)
		for _, r := range recs {
			if err := acc.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		if d := cmp.Diff(acc.Groups(), got, cmpopts.IgnoreUnexported(store.FieldAggs{}), cmpopts.EquateApprox(0, 1e-9)); d != "" {
			t.Errorf("index-only vs records (-records +index):\n%s", d)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c.q, c.indexOnly) })
	}

	byPrice := store.AggQuery{Filter: bind("price > 20"), Fields: []store.AggField{{Field: "price"}}}
	write := func(kind store.OpKind, id string) {
		t.Helper()
		if _, err := s.Write(ctx, inst, []store.Op{{Kind: kind, Type: "Sale", ID: id, Now: base.Add(time.Hour)}}, store.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	write(store.OpTrash, itemID(5))
	t.Run("a trashed record: the records are read", func(t *testing.T) { check(t, byPrice, false) })
	withTrashed := byPrice
	withTrashed.IncludeTrashed = true
	t.Run("trashed ones included: the index again", func(t *testing.T) { check(t, withTrashed, true) })
	write(store.OpUntrash, itemID(5))
	t.Run("untrashed: the index again", func(t *testing.T) { check(t, byPrice, true) })
	write(store.OpTrash, itemID(6))
	write(store.OpTrash, itemID(6)) // already trashed: counted once
	write(store.OpDelete, itemID(6))
	t.Run("the trashed record deleted: the index again", func(t *testing.T) { check(t, byPrice, true) })

	// A count taken on an instance of before the count existed: its next
	// declaration that changes a type counts the trashed records.
	write(store.OpTrash, itemID(7))
	if err := s.db.Update(func(tx *bbolt.Tx) error { return instBucket(tx, inst).DeleteBucket(bucketTrashed) }); err != nil {
		t.Fatal(err)
	}
	t.Run("no count: the records are read", func(t *testing.T) { check(t, byPrice, false) })
	spec.Indices = append(spec.Indices, []string{"title"})
	if err := s.Declare(ctx, inst, []store.TypeSpec{spec}); err != nil {
		t.Fatal(err)
	}
	if n, ok := s.trashed(t, inst, "Sale"); !ok || n != 1 {
		t.Errorf("after the declaration: %d trashed (kept %v), want 1", n, ok)
	}
	write(store.OpUntrash, itemID(7))
	t.Run("counted and untrashed: the index", func(t *testing.T) { check(t, byPrice, true) })
}

// trashed reads a type's count of trashed records.
func (s *Store) trashed(t *testing.T, inst, typ string) (n int, ok bool) {
	t.Helper()
	err := s.db.View(func(tx *bbolt.Tx) error {
		n, ok = trashedCount(instBucket(tx, inst), typ)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, ok
}
