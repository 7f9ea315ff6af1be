package storetest

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// aggRow is what a case checks of a group: its keys, count, and the
// count, sum, min and max of price (sums rounded to cents).
type aggRow struct {
	Keys                 []any
	Count, PriceCount    int
	PriceSum             any
	PriceMin, PriceMax   any
	PriceDistinct        int
	AuthorSum, AuthorMax any
}

func rowOf(g *store.Group) aggRow {
	row := aggRow{Keys: g.Keys, Count: g.Count}
	if p := g.Fields["price"]; p != nil {
		row.PriceCount, row.PriceSum, row.PriceMin, row.PriceMax, row.PriceDistinct = p.Count, cents(p.Sum), p.Min, p.Max, p.CountDist
	}
	if a := g.Fields["authorid"]; a != nil {
		row.AuthorSum, row.AuthorMax = a.Sum, a.Max
	}
	return row
}

func cents(v any) any {
	if f, ok := v.(float64); ok {
		return math.Round(f*100) / 100
	}
	return v
}

// testAggregate checks counts, sums, averages, extremes and distinct
// counts, grouping (with a time unit), Having, group paging, the trash
// rule and reference hops in the filter, on the library.
func testAggregate(t *testing.T, e *env) {
	inst := e.inst
	e.loadLibrary(inst)
	priceAndAuthor := []store.AggField{{Field: "price", Distinct: true}, {Field: "authorid"}}
	agg := func(q *store.AggQuery) []aggRow {
		t.Helper()
		gs, err := e.s.Aggregate(e.ctx, inst, q)
		if err != nil {
			t.Fatalf("Aggregate: %v", err)
		}
		rows := make([]aggRow, len(gs))
		for i, g := range gs {
			rows[i] = rowOf(g)
		}
		return rows
	}
	filter := func(text string) arcql.Expr { return e.query(inst, "Book", text).Filter }
	having := func(text string) arcql.Expr {
		t.Helper()
		pq, err := arcql.Parse(text, arcql.DefaultLimits())
		if err == nil {
			pq, err = arcql.Bind(pq, store.AggSchema{Kinds: map[string]arcql.FieldKind{"price": arcql.FieldFloat, "authorid": arcql.FieldInt}}, "Book", inst)
		}
		if err != nil {
			t.Fatalf("having %q: %v", text, err)
		}
		return pq.Filter
	}
	byAuthor := []store.GroupKey{{Field: "authorid"}}
	byAuthorDesc := []store.GroupKey{{Field: "authorid", Desc: true}}
	g1 := aggRow{Keys: []any{int64(1)}, Count: 3, PriceCount: 3, PriceSum: 37.49, PriceMin: 9.99, PriceMax: 15.0, PriceDistinct: 3, AuthorSum: int64(3), AuthorMax: int64(1)}
	g2 := aggRow{Keys: []any{int64(2)}, Count: 3, PriceCount: 2, PriceSum: 25.99, PriceMin: 5.99, PriceMax: 20.0, PriceDistinct: 2, AuthorSum: int64(6), AuthorMax: int64(2)}
	g3 := aggRow{Keys: []any{int64(3)}, Count: 1, PriceCount: 1, PriceSum: 5.99, PriceMin: 5.99, PriceMax: 5.99, PriceDistinct: 1, AuthorSum: int64(3), AuthorMax: int64(3)}
	g4 := aggRow{Keys: []any{int64(4)}, Count: 1, PriceCount: 0, PriceSum: nil, PriceMin: nil, PriceMax: nil, PriceDistinct: 0, AuthorSum: int64(4), AuthorMax: int64(4)}
	cases := []struct {
		name string
		q    store.AggQuery
		want []aggRow
	}{
		{"every record", store.AggQuery{Fields: priceAndAuthor},
			[]aggRow{{Keys: []any{}, Count: 8, PriceCount: 6, PriceSum: 69.47, PriceMin: 5.99, PriceMax: 20.0, PriceDistinct: 5, AuthorSum: int64(16), AuthorMax: int64(4)}}},
		{"a filter on an indexed field", store.AggQuery{Filter: filter("price > 10"), Fields: priceAndAuthor},
			[]aggRow{{Keys: []any{}, Count: 3, PriceCount: 3, PriceSum: 47.5, PriceMin: 12.5, PriceMax: 20.0, PriceDistinct: 3, AuthorSum: int64(4), AuthorMax: int64(2)}}},
		{"no record matches: one empty group", store.AggQuery{Filter: filter(`title = "nothing"`), Fields: priceAndAuthor},
			[]aggRow{{Keys: []any{}}}},
		{"a reference hop", store.AggQuery{Type: "Author", Filter: e.query(inst, "Author", `bestbook.price > 10`).Filter},
			[]aggRow{{Keys: []any{}, Count: 1}}},
		{"grouped", store.AggQuery{Fields: priceAndAuthor, GroupBy: byAuthor}, []aggRow{g1, g2, g3, g4}},
		{"grouped, descending", store.AggQuery{Fields: priceAndAuthor, GroupBy: byAuthorDesc}, []aggRow{g4, g3, g2, g1}},
		{"grouped, first two", store.AggQuery{Fields: priceAndAuthor, GroupBy: byAuthorDesc, First: 2}, []aggRow{g4, g3}},
		{"grouped, after a cursor", store.AggQuery{Fields: priceAndAuthor, GroupBy: byAuthorDesc, After: []any{int64(3)}}, []aggRow{g2, g1}},
		{"having", store.AggQuery{Fields: priceAndAuthor, GroupBy: byAuthor, Having: having("core.count >= 2 AND price.sum > 30")}, []aggRow{g1}},
		{"having on a missing sum", store.AggQuery{Fields: priceAndAuthor, GroupBy: byAuthor, Having: having("price.count = 0")}, []aggRow{g4}},
		{"grouped by a missing value", store.AggQuery{GroupBy: []store.GroupKey{{Field: "price"}}, Filter: filter("authorid = 2 OR authorid = 4")},
			[]aggRow{{Keys: []any{nil}, Count: 2}, {Keys: []any{5.99}, Count: 1}, {Keys: []any{20.0}, Count: 1}}},
		{"grouped by the hour created", store.AggQuery{GroupBy: []store.GroupKey{{Field: "core.created", Unit: store.Hours}}},
			[]aggRow{{Keys: []any{store.TruncateTime(at(1), store.Hours)}, Count: 8}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := c.q
			if q.Type == "" {
				q.Type = "Book"
			}
			for i := range c.want {
				if c.want[i].Keys == nil {
					c.want[i].Keys = []any{}
				}
			}
			if d := cmp.Diff(c.want, agg(&q)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}

	t.Run("averages, distinct sums and times", func(t *testing.T) {
		fields := append(slices.Clone(priceAndAuthor), store.AggField{Field: "core.created", Distinct: true})
		gs, err := e.s.Aggregate(e.ctx, inst, &store.AggQuery{Type: "Book", Fields: fields})
		if err != nil || len(gs) != 1 {
			t.Fatalf("Aggregate: %v %d groups", err, len(gs))
		}
		p, a := gs[0].Fields["price"], gs[0].Fields["authorid"]
		if got := p.Avg.(float64); math.Abs(got-69.47/6) > 1e-9 {
			t.Errorf("price avg %v, want %v", got, 69.47/6)
		}
		if got := p.SumDist.(float64); math.Abs(got-63.48) > 1e-9 {
			t.Errorf("price distinct sum %v, want 63.48", got)
		}
		if got := p.AvgDist.(float64); math.Abs(got-63.48/5) > 1e-9 {
			t.Errorf("price distinct avg %v, want %v", got, 63.48/5)
		}
		if a.Avg.(float64) != 2 {
			t.Errorf("authorid avg %v, want 2", a.Avg)
		}
		if c := gs[0].Fields["core.created"]; c.Count != 8 || c.CountDist != 8 || !c.Min.(time.Time).Equal(at(1)) || !c.Max.(time.Time).Equal(at(8)) {
			t.Errorf("core.created: %d values, %d distinct, from %v to %v; want 8, 8, %v to %v", c.Count, c.CountDist, c.Min, c.Max, at(1), at(8))
		}
	})

	t.Run("trashed records", func(t *testing.T) {
		e.writeIn(inst, store.Op{Kind: store.OpTrash, Type: "Book", ID: bookID(7), Now: at(50)})
		defer e.writeIn(inst, store.Op{Kind: store.OpUntrash, Type: "Book", ID: bookID(7), Now: at(51)})
		count := func(includeTrashed bool) int {
			gs, err := e.s.Aggregate(e.ctx, inst, &store.AggQuery{Type: "Book", IncludeTrashed: includeTrashed})
			if err != nil {
				t.Fatal(err)
			}
			return gs[0].Count
		}
		if got := count(false); got != 7 {
			t.Errorf("without trashed: %d records, want 7", got)
		}
		if got := count(true); got != 8 {
			t.Errorf("with trashed: %d records, want 8", got)
		}
	})

	t.Run("a bad unit", func(t *testing.T) {
		_, err := e.s.Aggregate(e.ctx, inst, &store.AggQuery{Type: "Book", GroupBy: []store.GroupKey{{Field: "core.created", Unit: "WEEKS"}}})
		if err == nil {
			t.Error("a group by WEEKS was accepted")
		}
	})

	t.Run("bounds", func(t *testing.T) {
		for _, c := range []struct {
			name string
			q    store.AggQuery
			msg  string
		}{
			{"groups", store.AggQuery{Type: "Book", GroupBy: byAuthor, MaxGroups: 3},
				"aggregate: more than 3 groups; narrow where, or group by fewer or coarser keys"},
			{"distinct values", store.AggQuery{Type: "Book", Fields: priceAndAuthor, MaxDistinct: 4},
				"aggregate: more than 4 distinct values; narrow where, or leave out distinct"},
			{"bytes", store.AggQuery{Type: "Book", Fields: priceAndAuthor, GroupBy: byAuthor, MaxBytes: 2000},
				"aggregate: its groups and distinct values would hold more than 2000 bytes; narrow where, group by fewer or coarser keys, or leave out distinct"},
			{"bytes of counted groups", store.AggQuery{Type: "Book", GroupBy: byAuthor, MaxBytes: 500},
				"aggregate: its groups and distinct values would hold more than 500 bytes; narrow where, group by fewer or coarser keys, or leave out distinct"},
		} {
			_, err := e.s.Aggregate(e.ctx, inst, &c.q)
			var be *store.BoundError
			if !errors.As(err, &be) || be.Msg != c.msg {
				t.Errorf("%s: %v, want a BoundError %q", c.name, err, c.msg)
			}
		}
		// Past the memory all aggregations share: the aggregation stops,
		// and what it took is given back.
		shared := store.NewAggMemory(1)
		if _, err := e.s.Aggregate(e.ctx, inst, &store.AggQuery{Type: "Book", GroupBy: byAuthor, Shared: shared}); !errors.Is(err, store.ErrAggregateMemory) {
			t.Errorf("past the shared memory: %v, want ErrAggregateMemory", err)
		}
		if shared.Used() != 0 {
			t.Errorf("after the aggregation ended the shared memory holds %d bytes", shared.Used())
		}
		// At the bounds, the answer is whole.
		if got := agg(&store.AggQuery{Type: "Book", Fields: priceAndAuthor, GroupBy: byAuthor, MaxGroups: 4, MaxDistinct: 6}); len(got) != 4 {
			t.Errorf("at the bounds: %d groups, want 4", len(got))
		}
	})
}
