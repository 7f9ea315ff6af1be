package storetest

import (
	"testing"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// findCase is a filter and the ids it must find, in order.
type findCase struct {
	typ, text string
	want      []string
}

func runFindCases(t *testing.T, e *env, inst string, cases []findCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.typ+": "+tt.text, func(t *testing.T) {
			if d := diffIDs(tt.want, e.findText(inst, tt.typ, tt.text)); d != "" {
				t.Errorf("%s (-want +got):\n%s", tt.text, d)
			}
		})
	}
}

func testFilters(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	allBooks := []string{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"}
	runFindCases(t, e, e.inst, []findCase{
		// Match all.
		{"Book", "", allBooks},
		{"Book", "*", allBooks},
		// Compare, every operator, on indexed (price) and plain fields.
		{"Book", "title = 'Inferno'", []string{"b1"}},
		{"Book", "title = 'inferno'", nil},
		{"Book", `title = 'O\'Reilly Guide'`, []string{"b6"}},
		{"Book", "title != 'Inferno'", []string{"b2", "b3", "b4", "b5", "b6", "b7", "b8"}},
		{"Book", "price = 5.99", []string{"b4", "b5"}},
		{"Book", "price = 6", nil},
		{"Book", "price != 5.99", []string{"b1", "b2", "b3", "b6", "b7", "b8"}},
		{"Book", "price < 10", []string{"b2", "b4", "b5"}},
		{"Book", "price <= 9.99", []string{"b2", "b4", "b5"}},
		{"Book", "price > 12.5", []string{"b3", "b7"}},
		{"Book", "price >= 12.5", []string{"b1", "b3", "b7"}},
		{"Book", "price > 100", nil},
		{"Book", "price >= -1", []string{"b1", "b2", "b3", "b4", "b5", "b7"}},
		{"Book", "authorid = 2", []string{"b4", "b6", "b7"}},
		{"Book", "authorid = '2'", []string{"b4", "b6", "b7"}},
		{"Book", "authorid > 1.5", []string{"b4", "b5", "b6", "b7", "b8"}},
		{"Book", "title ~ 'wise OTHERWISE'", []string{"b4"}},
		{"Book", "title ~ 'reilly'", []string{"b6"}},
		{"Book", "title ~ 'wise inferno'", nil},
		{"Book", "title ^ 'P'", []string{"b2", "b3"}},
		{"Book", "title ^ 'Pa'", []string{"b3"}},
		{"Book", "title ^ 'p'", nil},
		{"Book", "title * 'P*o'", []string{"b2", "b3"}},
		{"Book", "title * '?nferno'", []string{"b1"}},
		{"Book", "title * '*The*'", []string{"b7"}},
		// Range.
		{"Book", "price IN [5.99, 12.5]", []string{"b1", "b2", "b4", "b5"}},
		{"Book", "price IN (5.99, 12.5)", []string{"b2"}},
		{"Book", "price IN [5.99, 12.5)", []string{"b2", "b4", "b5"}},
		{"Book", "price IN (5.99, 12.5]", []string{"b1", "b2"}},
		{"Book", "authorid IN (1, 3]", []string{"b4", "b5", "b6", "b7"}},
		{"Book", "title IN ['O', 'Q')", []string{"b2", "b3", "b6"}},
		// Exist, null, Not.
		{"Book", "EXIST price", []string{"b1", "b2", "b3", "b4", "b5", "b7"}},
		{"Book", "NOT EXIST price", []string{"b6", "b8"}},
		{"Book", "price = null", []string{"b6", "b8"}},
		{"Book", "price != null", []string{"b1", "b2", "b3", "b4", "b5", "b7"}},
		{"Book", "NOT authorid = 1", []string{"b4", "b5", "b6", "b7", "b8"}},
		{"Book", "NOT NOT authorid = 1", []string{"b1", "b2", "b3"}},
		// And, Or.
		{"Book", "authorid = 2 AND price > 10", []string{"b7"}},
		{"Book", "price <= 5.99 AND title != 'Alchemist'", []string{"b4"}},
		{"Book", "(price = 5.99 AND authorid = 2) OR authorid = 3", []string{"b4", "b5"}},
		{"Book", "price = 5.99 OR price = 20 OR title = 'Inferno'", []string{"b1", "b4", "b5", "b7"}},
		{"Book", "price > 5 AND price < 13 AND authorid = 1", []string{"b1", "b2"}},
		{"Book", "price > 13 AND price < 12", nil},
		// Metadata.
		{"Book", "core.id = 'b3'", []string{"b3"}},
		{"Book", "core.id = 'b3' OR core.id = 'b5'", []string{"b3", "b5"}},
		{"Book", "core.id = 'nope'", nil},
		{"Book", "core.id = 'b3' AND price > 100", nil},
		{"Book", "core.id != 'b3' AND authorid = 1", []string{"b1", "b2"}},
		{"Book", "core.created >= '2026-03-01T12:05:00Z'", []string{"b5", "b6", "b7", "b8"}},
		{"Book", "core.created < '2026-03-01T12:03:00Z'", []string{"b1", "b2"}},
		{"Book", "core.created IN ['2026-03-01T12:02:00Z', '2026-03-01T12:03:00Z']", []string{"b2", "b3"}},
		{"Book", "core.updated = '2026-03-01T12:04:00Z'", []string{"b4"}},
		{"Book", "core.createdBy = 'acc2'", []string{"b2", "b4", "b6", "b8"}},
		{"Book", "core.instanceId = '" + e.inst + "'", allBooks},
		{"Book", "core.instanceId = 'someone-else'", nil},
		// Authors: an indexed string field, list references.
		{"Author", "name = 'Sudha Murty'", []string{"a2"}},
		{"Author", "name ~ 'sudha'", []string{"a2"}},
		{"Author", "name ^ 'Will'", []string{"a5"}},
		{"Author", "name * 'P*'", []string{"a3"}},
		{"Author", "name > 'Q'", []string{"a2", "a4", "a5"}},
		{"Author", "name < 'Q' AND age > 60", []string{"a3"}},
		{"Author", "age IN (50, 70]", []string{"a1", "a5"}},
		{"Author", "NOT EXIST age", []string{"a4"}},
		{"Author", "booklist = 'b2'", []string{"a1"}},
		{"Author", "booklist != 'b2'", []string{"a2", "a3", "a4", "a5"}},
		{"Author", "EXIST booklist", []string{"a1", "a2", "a3"}},
		{"Author", "NOT EXIST booklist", []string{"a4", "a5"}},
		{"Author", "bestbook = 'b4'", []string{"a2"}},
		{"Author", "bestbook = null", []string{"a4", "a5"}},
		{"Author", "booklist ^ 'b'", []string{"a1", "a2", "a3"}},
	})

	// Nodes that Bind produces from hops, given directly.
	nodes := []struct {
		name   string
		typ    string
		filter arcql.Expr
		want   []string
	}{
		{"InIDs on core.id", "Book", &arcql.InIDs{Field: "core.id", IDs: []string{"b7", "nope", "b2"}}, []string{"b2", "b7"}},
		{"InIDs on a list reference", "Author", &arcql.InIDs{Field: "booklist", IDs: []string{"b6", "b1"}}, []string{"a1", "a2"}},
		{"InIDs on a reference", "Author", &arcql.InIDs{Field: "bestbook", IDs: []string{"b5", "b4", "b9"}}, []string{"a2", "a3"}},
		{"InIDs empty", "Author", &arcql.InIDs{Field: "bestbook"}, nil},
		{"All", "Book", &arcql.All{}, []string{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"}},
		{"Never", "Book", arcql.Never(), nil},
		{"And of InIDs and Compare", "Author", &arcql.And{Terms: []arcql.Expr{
			&arcql.InIDs{Field: "booklist", IDs: []string{"b1", "b4", "b5"}},
			&arcql.Compare{Path: arcql.Path{Parts: []string{"age"}}, Op: arcql.OpGt, Value: arcql.Value{Kind: arcql.KindNumber, Num: 60}},
		}}, []string{"a2", "a3"}},
		{"Hop", "Author", &arcql.Hop{Field: "booklist", List: true, Target: "Book",
			Sub: &arcql.Compare{Path: arcql.Path{Parts: []string{"authorid"}}, Op: arcql.OpEq, Value: arcql.Value{Kind: arcql.KindNumber, Num: 2}},
		}, []string{"a2"}},
	}
	for _, tt := range nodes {
		t.Run("node "+tt.name, func(t *testing.T) {
			if d := diffIDs(tt.want, e.find(e.inst, &store.Query{Type: tt.typ, Filter: tt.filter})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}

	t.Run("unknown type", func(t *testing.T) {
		if got := e.find(e.inst, &store.Query{Type: "Nothing"}); len(got) != 0 {
			t.Errorf("Find on a type without records = %v", got)
		}
	})
	t.Run("unknown instance", func(t *testing.T) {
		if got := e.find(otherInstance(), &store.Query{Type: "Book"}); len(got) != 0 {
			t.Errorf("Find in an empty instance = %v", got)
		}
	})
}

func testSort(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	tests := []struct {
		typ, text string
		limit     int
		want      []string
	}{
		{"Book", "* SORT price", 0, []string{"b6", "b8", "b4", "b5", "b2", "b1", "b3", "b7"}},
		{"Book", "* SORT price ASC", 3, []string{"b6", "b8", "b4"}},
		{"Book", "* SORT price DESC", 0, []string{"b7", "b3", "b1", "b2", "b4", "b5", "b6", "b8"}},
		{"Book", "* SORT price DESC", 3, []string{"b7", "b3", "b1"}},
		{"Book", "* SORT title", 0, []string{"b5", "b8", "b1", "b6", "b3", "b2", "b7", "b4"}},
		{"Book", "* SORT title DESC", 0, []string{"b4", "b7", "b2", "b3", "b6", "b1", "b8", "b5"}},
		{"Book", "* SORT authorid DESC, price", 0, []string{"b8", "b5", "b6", "b4", "b7", "b2", "b1", "b3"}},
		{"Book", "* SORT authorid, price DESC", 0, []string{"b3", "b1", "b2", "b7", "b4", "b6", "b5", "b8"}},
		{"Book", "* SORT price DESC, title DESC", 0, []string{"b7", "b3", "b1", "b2", "b4", "b5", "b6", "b8"}},
		{"Book", "* SORT core.created DESC", 0, []string{"b8", "b7", "b6", "b5", "b4", "b3", "b2", "b1"}},
		{"Book", "* SORT core.id DESC", 2, []string{"b8", "b7"}},
		{"Book", "price > 5 SORT price DESC", 0, []string{"b7", "b3", "b1", "b2", "b4", "b5"}},
		{"Book", "price < 13 SORT price", 0, []string{"b4", "b5", "b2", "b1"}},
		{"Book", "price IN [9, 16] SORT price DESC", 0, []string{"b3", "b1", "b2"}},
		{"Book", "authorid = 2 SORT price DESC", 0, []string{"b7", "b4", "b6"}},
		{"Book", "authorid = 2 SORT price", 2, []string{"b6", "b4"}},
		{"Book", "price = 5.99 SORT title", 0, []string{"b5", "b4"}},
		{"Book", "title ^ 'P' SORT price DESC", 0, []string{"b3", "b2"}},
		{"Author", "* SORT name", 0, []string{"a1", "a3", "a4", "a2", "a5"}},
		{"Author", "* SORT age DESC", 0, []string{"a3", "a2", "a1", "a5", "a4"}},
		{"Author", "* SORT age", 0, []string{"a4", "a5", "a1", "a2", "a3"}},
		{"Author", "booklist = 'b5' OR age < 60 SORT age DESC", 0, []string{"a3", "a1", "a5"}},
	}
	for _, tt := range tests {
		t.Run(tt.typ+": "+tt.text, func(t *testing.T) {
			q := e.query(e.inst, tt.typ, tt.text)
			q.Limit = tt.limit
			if d := diffIDs(tt.want, e.find(e.inst, q)); d != "" {
				t.Errorf("limit %d (-want +got):\n%s", tt.limit, d)
			}
		})
	}
}
