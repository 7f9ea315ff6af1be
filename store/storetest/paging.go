package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// pagingRecords writes 60 books p00…p59: price i%7 (none when i%10 == 0,
// so there are missing values and many ties), titles in a shuffled order.
func (e *env) pagingRecords(inst string) []string {
	e.t.Helper()
	e.declare(inst)
	var ops []store.Op
	var all []string
	for i := range 60 {
		id := fmt.Sprintf("p%02d", i)
		set := map[string]any{"title": fmt.Sprintf("t%02d", (i*37)%60), "authorid": int64(i % 4)}
		if i%10 != 0 {
			set["price"] = float64(i % 7)
		}
		ops = append(ops, upsert("Book", id, at(i), set))
		all = append(all, id)
	}
	e.writeIn(inst, ops...)
	return all
}

// oracle is the full result of q (paging aside), computed with arcql's
// reference Match and CompareSort over the records read with GetMany.
func (e *env) oracle(inst string, q *store.Query, ids []string) []string {
	e.t.Helper()
	recs, err := e.s.GetMany(e.ctx, inst, q.Type, ids)
	if err != nil {
		e.t.Fatal(err)
	}
	var sel []*store.Record
	for _, r := range recs {
		if (r.Trashed == nil || q.IncludeTrashed) && arcql.Match(q.Filter, r) {
			sel = append(sel, r)
		}
	}
	slices.SortFunc(sel, func(a, b *store.Record) int { return arcql.CompareSort(q.Sort, a, b) })
	out := make([]string, len(sel))
	for i, r := range sel {
		out[i] = r.ID
	}
	return out
}

func testPaging(t *testing.T, e *env) {
	all60 := e.pagingRecords(e.inst)
	orders := []string{
		"*",
		"* SORT price",
		"* SORT price DESC",
		"* SORT title DESC",
		"* SORT authorid, price DESC",
		"price >= 3",
		"price >= 3 SORT price DESC",
		"price < 5 SORT price",
		"authorid = 1",
		"authorid = 1 SORT title",
		"price = 2",
		"price = 2 SORT price DESC",
	}
	for _, text := range orders {
		t.Run(text, func(t *testing.T) {
			base := e.query(e.inst, "Book", text)
			all := e.oracle(e.inst, base, all60)
			n := len(all)
			if n < 8 {
				t.Fatalf("fixture too small for %q: %d records", text, n)
			}
			k := n / 4
			id := func(i int) string { return all[i] }
			cases := []struct {
				name string
				set  func(q *store.Query)
				want []string
			}{
				{"all", func(q *store.Query) {}, all},
				{"limit", func(q *store.Query) { q.Limit = k }, all[:k]},
				{"limit over", func(q *store.Query) { q.Limit = n + 10 }, all},
				{"after", func(q *store.Query) { q.After = id(k - 1); q.Limit = k }, all[k : 2*k]},
				{"after near the end", func(q *store.Query) { q.After = id(n - 3); q.Limit = k }, all[n-2:]},
				{"after the last", func(q *store.Query) { q.After = id(n - 1) }, nil},
				{"after no limit", func(q *store.Query) { q.After = id(2) }, all[3:]},
				{"before", func(q *store.Query) { q.Before = id(2 * k); q.Limit = 3 }, all[:3]},
				{"before the first", func(q *store.Query) { q.Before = id(0) }, nil},
				{"before backward", func(q *store.Query) { q.Before = id(2 * k); q.Backward = true; q.Limit = 3 }, all[2*k-3 : 2*k]},
				{"backward", func(q *store.Query) { q.Backward = true; q.Limit = k }, all[n-k:]},
				{"backward no limit", func(q *store.Query) { q.Backward = true }, all},
				{"skip", func(q *store.Query) { q.Skip = 2; q.Limit = k }, all[2 : 2+k]},
				{"skip all", func(q *store.Query) { q.Skip = n }, nil},
				{"backward skip", func(q *store.Query) { q.Backward = true; q.Skip = 2; q.Limit = 3 }, all[n-5 : n-2]},
				{"after and before", func(q *store.Query) { q.After = id(1); q.Before = id(k + 2) }, all[2 : k+2]},
				{"after and before backward", func(q *store.Query) {
					q.After = id(1)
					q.Before = id(k + 2)
					q.Backward = true
					q.Limit = 2
				}, all[k : k+2]},
				{"after skip limit", func(q *store.Query) { q.After = id(1); q.Skip = 1; q.Limit = 3 }, all[3:6]},
				{"before backward skip", func(q *store.Query) { q.Before = id(k + 3); q.Backward = true; q.Skip = 1; q.Limit = 2 }, all[k : k+2]},
				{"same cursor both sides", func(q *store.Query) { q.After = id(3); q.Before = id(3) }, nil},
				{"crossed cursors", func(q *store.Query) { q.After = id(5); q.Before = id(2) }, nil},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					q := *base
					c.set(&q)
					if d := diffIDs(c.want, e.find(e.inst, &q)); d != "" {
						t.Errorf("%+v (-want +got):\n%s", q, d)
					}
				})
			}
			t.Run("walk forward", func(t *testing.T) {
				var got []string
				q := *base
				q.Limit = 7
				for range n {
					page := e.find(e.inst, &q)
					got = append(got, page...)
					if len(page) < q.Limit {
						break
					}
					q.After = page[len(page)-1]
				}
				if d := cmp.Diff(all, got); d != "" {
					t.Errorf("pages joined (-want +got):\n%s", d)
				}
			})
			t.Run("walk backward", func(t *testing.T) {
				var got []string
				q := *base
				q.Limit = 7
				q.Backward = true
				for range n {
					page := e.find(e.inst, &q)
					got = append(append([]string{}, page...), got...)
					if len(page) < q.Limit {
						break
					}
					q.Before = page[0]
				}
				if d := cmp.Diff(all, got); d != "" {
					t.Errorf("pages joined (-want +got):\n%s", d)
				}
			})
		})
	}

	t.Run("cursor errors", func(t *testing.T) {
		e.write(store.Op{Kind: store.OpTrash, Type: "Book", ID: "p13", Now: at(100)})
		tests := []struct {
			name string
			q    *store.Query
		}{
			{"after missing", &store.Query{Type: "Book", After: "nope"}},
			{"before missing", &store.Query{Type: "Book", Before: "nope", Backward: true}},
			{"after not matching", func() *store.Query {
				q := e.query(e.inst, "Book", "price >= 3")
				q.After = "p01" // price 1
				return q
			}()},
			{"before not matching", func() *store.Query {
				q := e.query(e.inst, "Book", "price = 2 SORT price")
				q.Before = "p03"
				return q
			}()},
			{"after trashed", &store.Query{Type: "Book", After: "p13"}},
			{"after of another type", &store.Query{Type: "Author", After: "p01"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				recs, err := e.s.Find(e.ctx, e.inst, tt.q)
				if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Find = %v, %v; want ErrNotFound", ids(recs), err)
				}
			})
		}
		t.Run("trashed cursor with includeTrashed", func(t *testing.T) {
			got := e.find(e.inst, &store.Query{Type: "Book", After: "p13", Limit: 2, IncludeTrashed: true})
			if d := diffIDs([]string{"p14", "p15"}, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	})
}
