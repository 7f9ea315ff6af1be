package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// testGrants checks the filters access rights push into a find: a
// caller's own records (core.createdBy = me) OR the records of owners
// that granted it theirs (core.createdBy IN owners) OR granted records
// (core.id IN ids), under the caller's own filter and sort, page after
// page in both directions.
func testGrants(t *testing.T, e *env) {
	inst := e.inst
	e.declare(inst)
	var ops []store.Op
	var all []string
	for i := range 60 {
		id := fmt.Sprintf("g%02d", i)
		op := upsert("Book", id, at(i), map[string]any{"title": fmt.Sprintf("t%02d", (i*37)%60), "price": float64(i % 7)})
		op.CreatedBy = fmt.Sprintf("o%d", i%4)
		ops = append(ops, op)
		all = append(all, id)
	}
	e.writeIn(inst, ops...)
	createdBy := arcql.Path{Parts: []string{"core.createdBy"}}
	grants := &arcql.Or{Terms: []arcql.Expr{
		&arcql.Compare{Path: createdBy, Op: arcql.OpEq, Value: arcql.Value{Kind: arcql.KindString, Str: "o0"}},
		&arcql.InIDs{Field: "core.createdBy", IDs: []string{"o2", "nobody"}},
		&arcql.InIDs{Field: "core.id", IDs: []string{"g01", "g05", "g07", "g59", "missing"}},
	}}
	for _, text := range []string{"*", "price >= 2", "price >= 2 SORT price DESC", "* SORT title"} {
		t.Run(text, func(t *testing.T) {
			q := e.query(inst, "Book", text)
			if q.Filter == nil {
				q.Filter = grants
			} else {
				q.Filter = &arcql.And{Terms: []arcql.Expr{q.Filter, grants}}
			}
			want := e.oracle(inst, q, all)
			if len(want) < 10 {
				t.Fatalf("fixture too small: %d records", len(want))
			}
			for _, id := range want {
				if r := e.get(inst, "Book", id); r.CreatedBy != "o0" && r.CreatedBy != "o2" && id != "g01" && id != "g05" && id != "g07" && id != "g59" {
					t.Fatalf("the oracle selected %s of %s", id, r.CreatedBy)
				}
			}
			if d := diffIDs(want, e.find(inst, q)); d != "" {
				t.Errorf("all at once (-want +got):\n%s", d)
			}
			for _, backward := range []bool{false, true} {
				var got []string
				p := *q
				p.Limit, p.Backward = 4, backward
				for range len(want) {
					page := e.find(inst, &p)
					if backward {
						got = append(page, got...)
					} else {
						got = append(got, page...)
					}
					if len(page) < p.Limit {
						break
					}
					if backward {
						p.Before = page[0]
					} else {
						p.After = page[len(page)-1]
					}
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("pages of 4, backward %v (-want +got):\n%s", backward, d)
				}
			}
		})
	}
	// Long id lists (as access rights make them: NewInIDs, a digest in
	// their text): two different lists asked one after the other, ids
	// only as paging asks, each answered for itself.
	for _, step := range []int{2, 3} {
		var list []string
		for i := 0; i < 60; i += step {
			list = append(list, all[i])
		}
		q := &store.Query{Type: "Book", Filter: arcql.NewInIDs("core.id", list), IDsOnly: true, Limit: 100}
		want := e.oracle(inst, q, all)
		for range 2 { // the second time from any cache the store keeps
			recs, err := e.s.Find(e.ctx, inst, q)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffIDs(want, ids(recs)); d != "" {
				t.Errorf("every %dth book by a long id list (-want +got):\n%s", step, d)
			}
		}
	}
}
