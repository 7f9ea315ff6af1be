package mongo_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
	"github.com/corehq/core/store/mongo/mongotest"
)

// bookFields binds the test's filters.
type bookFields struct{}

func (bookFields) Field(typ, name string) (arcql.Field, bool) {
	switch name {
	case "authorid":
		return arcql.Field{Kind: arcql.FieldInt}, true
	case "price":
		return arcql.Field{Kind: arcql.FieldFloat}, true
	}
	return arcql.Field{}, false
}

// TestAggregateOnTheServer: a count, grouped by fields or not, is counted
// by the server ($match, $group) with the accumulator's results — a
// record without the key and one with it null in one group, trashed
// records left out — and a query with field aggregates or a time unit
// streams the records instead.
func TestAggregateOnTheServer(t *testing.T) {
	t.Parallel()
	s := mongotest.Open(t)
	ctx := t.Context()
	const inst = "aggsrv"
	if err := s.Declare(ctx, inst, []store.TypeSpec{{Name: "Book"}}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var ops []store.Op
	for i, set := range []map[string]any{
		{"authorid": int64(1), "price": 12.5}, {"authorid": int64(1), "price": float64(10)}, {"authorid": int64(2), "price": 30.0},
		{"price": 5.0}, {"authorid": nil, "price": 7.5}, {"authorid": int64(2)}, {"authorid": int64(3), "price": 99.0},
	} {
		ops = append(ops, store.Op{Kind: store.OpUpsert, Type: "Book", ID: string(rune('a' + i)), Set: set, Now: now})
	}
	ops = append(ops, store.Op{Kind: store.OpTrash, Type: "Book", ID: "g", Now: now})
	if _, err := s.Write(ctx, inst, ops[:7], store.Quota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, inst, ops[7:], store.Quota{}); err != nil {
		t.Fatal(err)
	}
	bind := func(text string) arcql.Expr {
		pq, err := arcql.Parse(text, arcql.DefaultLimits())
		if err == nil {
			pq, err = arcql.Bind(pq, bookFields{}, "Book", inst)
		}
		if err != nil {
			t.Fatal(err)
		}
		return pq.Filter
	}
	type row struct {
		Keys  []any
		Count int
	}
	for _, c := range []struct {
		name    string
		q       store.AggQuery
		grouped bool
		want    []row
	}{
		{"every record", store.AggQuery{}, true, []row{{[]any{}, 6}}},
		{"a filter", store.AggQuery{Filter: bind("price > 9")}, true, []row{{[]any{}, 3}}},
		{"by author", store.AggQuery{GroupBy: []store.GroupKey{{Field: "authorid"}}}, true,
			[]row{{[]any{nil}, 2}, {[]any{int64(1)}, 2}, {[]any{int64(2)}, 2}}},
		{"by author, trashed too, descending, first 2", store.AggQuery{GroupBy: []store.GroupKey{{Field: "authorid", Desc: true}}, IncludeTrashed: true, First: 2}, true,
			[]row{{[]any{int64(3)}, 1}, {[]any{int64(2)}, 2}}},
		{"by author and price", store.AggQuery{Filter: bind("authorid = 1"), GroupBy: []store.GroupKey{{Field: "authorid"}, {Field: "price"}}}, true,
			[]row{{[]any{int64(1), float64(10)}, 1}, {[]any{int64(1), 12.5}, 1}}},
		{"a field aggregate: streamed", store.AggQuery{Fields: []store.AggField{{Field: "price"}}}, false, []row{{[]any{}, 6}}},
		{"a time unit: streamed", store.AggQuery{GroupBy: []store.GroupKey{{Field: "core.created", Unit: store.Years}}}, false, []row{{[]any{"2026"}, 6}}},
	} {
		q := c.q
		q.Type = "Book"
		gs, grouped, err := s.AggregateReport(ctx, inst, &q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if grouped != c.grouped {
			t.Errorf("%s: grouped on the server %v, want %v", c.name, grouped, c.grouped)
		}
		var got []row
		for _, g := range gs {
			got = append(got, row{g.Keys, g.Count})
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}
