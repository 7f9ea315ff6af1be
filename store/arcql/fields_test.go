package arcql

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFields(t *testing.T) {
	path := func(parts ...string) Path { return Path{Parts: parts} }
	e := &And{Terms: []Expr{
		&Compare{Path: path("price"), Op: OpGt, Value: Value{Kind: KindNumber, Num: 50}},
		&Or{Terms: []Expr{
			&Not{X: &Exist{Path: path("address", "city")}},
			&Range{Path: path("core.created")},
			&Compare{Path: path("core", "updated")},
		}},
		&InIDs{Field: "shelf.book", IDs: []string{"b1"}},
		&InIDs{Field: "core.id", IDs: []string{"b1"}},
		&Hop{Field: "author", Target: "Author", Sub: &Compare{Path: path("name")}},
		&All{},
	}}
	var got []string
	Fields(e, []SortKey{{Path: path("title")}, {Path: path("price"), Desc: true}}, func(n string) { got = append(got, n) })
	slices.Sort(got)
	got = slices.Compact(got)
	want := []string{"address", "author", "core.created", "core.id", "core.updated", "price", "shelf", "title"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fields (-want +got):\n%s", diff)
	}
	Fields(nil, nil, func(n string) { t.Errorf("Fields(nil) added %q", n) })
}
