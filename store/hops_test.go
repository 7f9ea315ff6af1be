package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store/arcql"
)

// finder is a Store whose Find evaluates filters over fixed records with
// arcql.Match and records the queries it was asked; the other methods are
// not used by ResolveHops.
type finder struct {
	Store
	recs    []*Record
	queries []Query
}

func (f *finder) Find(ctx context.Context, inst string, q *Query) ([]*Record, error) {
	f.queries = append(f.queries, *q)
	var out []*Record
	for _, r := range f.recs {
		if r.Type == q.Type && (r.Trashed == nil || q.IncludeTrashed) && arcql.Match(q.Filter, r) {
			out = append(out, r)
			if q.Limit > 0 && len(out) == q.Limit {
				break
			}
		}
	}
	return out, nil
}

func eq(field, s string) *arcql.Compare {
	return &arcql.Compare{Path: arcql.Path{Parts: []string{field}}, Op: arcql.OpEq, Value: arcql.Value{Kind: arcql.KindString, Str: s}}
}

func TestResolveHops(t *testing.T) {
	trashed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := &finder{recs: []*Record{
		{Type: "Book", ID: "b1", Fields: map[string]any{"title": "Inferno", "publisher": "p1"}},
		{Type: "Book", ID: "b2", Fields: map[string]any{"title": "Purgatorio", "publisher": "p2"}},
		{Type: "Book", ID: "b3", Fields: map[string]any{"title": "Inferno", "publisher": "p2"}},
		{Type: "Book", ID: "b4", Fields: map[string]any{"title": "Inferno"}, Trashed: &trashed},
		{Type: "Publisher", ID: "p1", Fields: map[string]any{"name": "Penguin"}},
		{Type: "Publisher", ID: "p2", Fields: map[string]any{"name": "Hachette"}},
	}}
	ctx := context.Background()
	plain := eq("name", "x")
	tests := []struct {
		name string
		in   arcql.Expr
		want arcql.Expr
	}{
		{"nil", nil, nil},
		{"no hop", plain, plain},
		{"hop", &arcql.Hop{Field: "bestbook", Target: "Book", Sub: eq("title", "Inferno")},
			&arcql.InIDs{Field: "bestbook", IDs: []string{"b1", "b3"}}},
		{"hop matching nothing", &arcql.Hop{Field: "bestbook", Target: "Book", Sub: eq("title", "Nothing")},
			&arcql.InIDs{Field: "bestbook", IDs: []string{}}},
		{"nested hop", &arcql.Hop{Field: "booklist", List: true, Target: "Book",
			Sub: &arcql.Hop{Field: "publisher", Target: "Publisher", Sub: eq("name", "Hachette")}},
			&arcql.InIDs{Field: "booklist", IDs: []string{"b2", "b3"}}},
		{"inside and, or, not", &arcql.And{Terms: []arcql.Expr{
			plain,
			&arcql.Or{Terms: []arcql.Expr{plain, &arcql.Not{X: &arcql.Hop{Field: "bestbook", Target: "Book", Sub: eq("title", "Purgatorio")}}}},
		}}, &arcql.And{Terms: []arcql.Expr{
			plain,
			&arcql.Or{Terms: []arcql.Expr{plain, &arcql.Not{X: &arcql.InIDs{Field: "bestbook", IDs: []string{"b2"}}}}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveHops(ctx, f, "inst", tt.in, 10)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b []string) bool { return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b)) })); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}

	t.Run("unchanged subtrees are shared", func(t *testing.T) {
		and := &arcql.And{Terms: []arcql.Expr{plain, &arcql.Not{X: plain}}}
		got, _ := ResolveHops(ctx, f, "inst", and, 10)
		if got != arcql.Expr(and) {
			t.Error("a filter without hops was copied")
		}
		mixed := &arcql.And{Terms: []arcql.Expr{and, &arcql.Hop{Field: "f", Target: "Book", Sub: plain}}}
		got, _ = ResolveHops(ctx, f, "inst", mixed, 10)
		if got.(*arcql.And).Terms[0] != arcql.Expr(and) {
			t.Error("an unchanged term was copied")
		}
		if _, ok := mixed.Terms[1].(*arcql.Hop); !ok {
			t.Error("the input was modified")
		}
	})

	t.Run("sub-queries are bounded and exclude trashed records", func(t *testing.T) {
		f.queries = nil
		if _, err := ResolveHops(ctx, f, "inst", &arcql.Hop{Field: "bestbook", Target: "Book", Sub: plain}, 7); err != nil {
			t.Fatal(err)
		}
		if len(f.queries) != 1 || f.queries[0].Limit != 8 || f.queries[0].IncludeTrashed || f.queries[0].Type != "Book" {
			t.Errorf("queries = %+v", f.queries)
		}
	})

	t.Run("hops of an OR through one field are one sub-query", func(t *testing.T) {
		f.queries = nil
		in := &arcql.Or{Terms: []arcql.Expr{
			&arcql.Hop{Field: "bestbook", Target: "Book", Sub: eq("title", "Purgatorio")},
			plain,
			&arcql.Hop{Field: "publisher", Target: "Publisher", Sub: eq("name", "Penguin")},
			&arcql.Hop{Field: "bestbook", Target: "Book", Sub: &arcql.Hop{Field: "publisher", Target: "Publisher", Sub: eq("name", "Penguin")}},
		}}
		got, err := ResolveHops(ctx, f, "inst", in, 1)
		if err != nil {
			t.Fatal(err) // two Books match the merged hop: within its bound of 2
		}
		want := &arcql.Or{Terms: []arcql.Expr{
			&arcql.InIDs{Field: "bestbook", IDs: []string{"b1", "b2"}},
			plain,
			&arcql.InIDs{Field: "publisher", IDs: []string{"p1"}},
		}}
		if d := cmp.Diff(arcql.Expr(want), got); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		var types []string
		for _, q := range f.queries {
			types = append(types, q.Type)
		}
		if d := cmp.Diff([]string{"Publisher", "Book", "Publisher"}, types); d != "" {
			t.Errorf("sub-queries (-want +got):\n%s", d)
		}
		if len(in.Terms) != 4 {
			t.Error("the input was modified")
		}
		// A hop without a sub-filter matches every target record: so
		// does the merged one.
		got, err = ResolveHops(ctx, f, "inst", &arcql.Or{Terms: []arcql.Expr{
			&arcql.Hop{Field: "bestbook", Target: "Book", Sub: eq("title", "Purgatorio")},
			&arcql.Hop{Field: "bestbook", Target: "Book"},
		}}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(arcql.Expr(&arcql.InIDs{Field: "bestbook", IDs: []string{"b1", "b2", "b3"}}), got.(*arcql.Or).Terms[0]); d != "" {
			t.Errorf("with a hop matching any record (-want +got):\n%s", d)
		}
	})

	t.Run("too many", func(t *testing.T) {
		nested := &arcql.Hop{Field: "bestbook", Target: "Book",
			Sub: &arcql.Hop{Field: "publisher", Target: "Publisher", Sub: nil}}
		tests := []struct {
			name string
			in   arcql.Expr
			max  int
			msg  string
		}{
			{"flat", &arcql.Hop{Field: "bestbook", Target: "Book", Sub: eq("title", "Inferno")}, 1,
				"reference filter on bestbook matches more than 1 Book records"},
			{"nested", nested, 1, "reference filter on bestbook.publisher matches more than 1 Publisher records"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := ResolveHops(ctx, f, "inst", tt.in, tt.max)
				if !errors.Is(err, ErrTooMany) {
					t.Fatalf("err = %v, want ErrTooMany", err)
				}
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("message %q does not say %q", err, tt.msg)
				}
			})
		}
	})

	t.Run("bound must be positive", func(t *testing.T) {
		if _, err := ResolveHops(ctx, f, "inst", nil, 0); err == nil {
			t.Error("max 0 accepted")
		}
	})
}
