package mongo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/corehq/core/internal/golden"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// goldenSchema is the schema of docs/arcql.md's examples.
type goldenSchema map[string]map[string]arcql.Field

func (s goldenSchema) Field(typ, name string) (arcql.Field, bool) {
	if strings.HasPrefix(name, "core.") {
		switch name {
		case "core.created", "core.updated", "core.trashed":
			return arcql.Field{Kind: arcql.FieldTime}, true
		case "core.id", "core.createdBy", "core.instanceId":
			return arcql.Field{Kind: arcql.FieldID}, true
		}
		return arcql.Field{}, false
	}
	f, ok := s[typ][name]
	return f, ok
}

var schema = goldenSchema{
	"Book": {
		"title":    {Kind: arcql.FieldString},
		"authorid": {Kind: arcql.FieldInt},
		"price":    {Kind: arcql.FieldFloat},
		"tags":     {Kind: arcql.FieldString, List: true},
		"released": {Kind: arcql.FieldTime},
		"meta":     {Kind: arcql.FieldJSON},
	},
	"Author": {
		"name":     {Kind: arcql.FieldString},
		"age":      {Kind: arcql.FieldInt},
		"bestbook": {Kind: arcql.FieldRef, Target: "Book"},
		"booklist": {Kind: arcql.FieldRef, Target: "Book", List: true},
	},
}

// goldenCases are docs/arcql.md's examples, in order, then the other forms the
// compiler has.
var goldenCases = []struct{ typ, query string }{
	{"Book", "*"},
	{"Book", "title = 'Wise and Otherwise'"},
	{"Author", "core.id = 'Author5'"},
	{"Book", "price <= 5.99 AND title != 'Alchemist'"},
	{"Book", "(price = 5.99 AND authorid = 1) OR authorid = 2"},
	{"Author", "name ~ 'sudha'"},
	{"Author", "name ^ 'Will'"},
	{"Author", "name * 'P*'"},
	{"Author", "age IN (50, 70]"},
	{"Author", "NOT EXIST age"},
	{"Book", `title = 'O\'Reilly'`},
	{"Author", "booklist.title = 'Inferno'"},
	{"Book", "* SORT price DESC, title"},
	{"Book", "core.created >= '2026-01-01T00:00:00Z' SORT core.created DESC"},
	// Beyond the examples.
	{"Book", "price = null"},
	{"Book", "price != null AND NOT (title = 'x' OR authorid > 3)"},
	{"Book", "tags = 'a' AND tags != 'b'"},
	{"Book", "title ^ '1.5'"},
	{"Book", "title * 'a?c*'"},
	{"Book", "title ~ 'one 2'"},
	{"Book", "NOT title ~ 'one'"},
	{"Book", "released > '2026-01-01T00:00:00.0005Z'"},
	{"Book", "core.updated = '2026-01-01T00:00:00.0001Z'"},
	{"Book", "meta.a.b = 1 AND meta.c = 'x'"},
	{"Book", "EXIST core.trashed SORT core.id DESC"},
	{"Author", "bestbook.price > 10 OR NOT booklist.title = 'x'"},
}

// resolveFake replaces each hop by an InIDs naming two placeholder ids,
// standing in for store.ResolveHops (which needs a store).
func resolveFake(e arcql.Expr) arcql.Expr {
	switch n := e.(type) {
	case *arcql.And:
		out := &arcql.And{}
		for _, t := range n.Terms {
			out.Terms = append(out.Terms, resolveFake(t))
		}
		return out
	case *arcql.Or:
		out := &arcql.Or{}
		for _, t := range n.Terms {
			out.Terms = append(out.Terms, resolveFake(t))
		}
		return out
	case *arcql.Not:
		return &arcql.Not{X: resolveFake(n.X)}
	case *arcql.Hop:
		return &arcql.InIDs{Field: n.Field, IDs: []string{"<id1>", "<id2>"}}
	}
	return e
}

func extJSON(t *testing.T, d bson.D) string {
	t.Helper()
	if d == nil {
		d = bson.D{}
	}
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// planOf is the plan of query on typ of the golden schema, as Find would
// build it (reference hops resolved by resolveFake), for instance inst1.
func planOf(t *testing.T, typ, query string) *plan {
	t.Helper()
	pq, err := arcql.Parse(query, arcql.DefaultLimits())
	if err != nil {
		t.Fatalf("Parse(%q): %v", query, err)
	}
	bq, err := arcql.Bind(pq, schema, typ, "inst1")
	if err != nil {
		t.Fatalf("Bind(%q): %v", query, err)
	}
	q := &store.Query{Type: typ, Filter: resolveFake(bq.Filter), Sort: bq.Sort}
	p, err := buildPlan("inst1", q, q.Filter, nil, nil)
	if err != nil {
		t.Fatalf("buildPlan(%q): %v", query, err)
	}
	return p
}

// TestFilterGolden pins the MongoDB filter and sort of each case: a change
// in what the compiler builds shows in testdata/filters.golden
// (go test -run TestFilterGolden -update rewrites it).
func TestFilterGolden(t *testing.T) {
	var out bytes.Buffer
	for _, c := range goldenCases {
		p := planOf(t, c.typ, c.query)
		fmt.Fprintf(&out, "%s: %s\n  filter: %s\n  sort:   %s\n  exact:  %v\n\n", c.typ, c.query, extJSON(t, p.filter), extJSON(t, p.sort), p.exact)
	}
	golden.Check(t, filepath.Join("testdata", "filters.golden"), out.String())
}

// TestPagingGolden pins the cursor condition of a sorted page.
func TestPagingGolden(t *testing.T) {
	pq, err := arcql.Parse("price > 1 SORT price DESC, title", arcql.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	bq, err := arcql.Bind(pq, schema, "Book", "inst1")
	if err != nil {
		t.Fatal(err)
	}
	after := &store.Record{Type: "Book", ID: "b7", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Fields: map[string]any{"price": 5.5}}
	before := &store.Record{Type: "Book", ID: "b2", Fields: map[string]any{"title": "Zed"}}
	q := &store.Query{Type: "Book", Filter: bq.Filter, Sort: bq.Sort, After: "b7", Before: "b2", Backward: true, Limit: 10}
	p, err := buildPlan("inst1", q, q.Filter, after, before)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	fmt.Fprintf(&got, "filter: %s\nsort:   %s\nexact:  %v\n", extJSON(t, p.filter), extJSON(t, p.sort), p.exact)
	golden.Check(t, filepath.Join("testdata", "paging.golden"), got.String())
}

func TestEscapeKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "a", "a.b", "$x", "a$", "100%", "%", "%l", "%25", "x\x00y", "ünï.cödé"} {
		e := escapeKey(k)
		if strings.Contains(e, ".") || strings.HasPrefix(e, "$") || strings.Contains(e, "\x00") || e == "" || e == nestedList {
			t.Errorf("escapeKey(%q) = %q is not a safe field name", k, e)
		}
		if got := unescapeKey(e); got != k {
			t.Errorf("unescapeKey(escapeKey(%q)) = %q", k, got)
		}
	}
}

func TestValueRoundTrip(t *testing.T) {
	t.Parallel()
	in := map[string]any{"l": []any{[]any{}, []any{[]any{int64(1)}}, map[string]any{"a.b": []any{"x"}, "$k": nil}}}
	enc, err := encodeValue("f", in)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bson.Marshal(bson.M{"v": enc})
	if err != nil {
		t.Fatal(err)
	}
	var back bson.M
	if err := bson.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, decodeValue(back["v"])); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
	j, _ := json.Marshal(enc)
	if strings.Contains(string(j), "[[") {
		t.Errorf("a list directly inside a list was stored: %s", j)
	}
}
