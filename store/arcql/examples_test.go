package arcql

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testInstance = "inst1"

// examples are the examples of docs/arcql.md, in order, run end to end: parsed,
// bound to a type, and evaluated over the sample records.
var examples = []struct {
	query string
	typ   string
	bound string   // the bound query's canonical text
	want  []string // the ids found, in order
}{
	{"*", "Book", "*", []string{"B1", "B2", "B3", "B4", "B5"}},
	{"title = 'Wise and Otherwise'", "Book", "title = 'Wise and Otherwise'", []string{"B3"}},
	{"core.id = 'Author5'", "Author", "core.id = 'Author5'", []string{"Author5"}},
	{"price <= 5.99 AND title != 'Alchemist'", "Book", "price <= 5.99 AND title != 'Alchemist'", []string{"B1", "B3"}},
	{"(price = 5.99 AND authorid = 1) OR authorid = 2", "Book",
		"price = 5.99 AND authorid = 1 OR authorid = 2", []string{"B2", "B3", "B4"}},
	{"name ~ 'sudha'", "Author", "name ~ 'sudha'", []string{"Author1"}},
	{"name ^ 'Will'", "Author", "name ^ 'Will'", []string{"Author5"}},
	{"name * 'P*'", "Author", "name * 'P*'", []string{"Author2", "Author6"}},
	{"age IN (50, 70]", "Author", "age IN (50, 70]", []string{"Author1"}},
	{"NOT EXIST age", "Author", "NOT EXIST age", []string{"Author4", "Author5"}},
	{`title = 'O\'Reilly'`, "Book", `title = 'O\'Reilly'`, []string{"B4"}},
	{"booklist.title = 'Inferno'", "Author", "booklist -> Book(title = 'Inferno')", []string{"Author1", "Author4"}},
	{"* SORT price DESC, title", "Book", "* SORT price DESC, title", []string{"B4", "B2", "B1", "B3", "B5"}},
	{"core.created >= '2026-01-01T00:00:00Z' SORT core.created DESC", "Book",
		"core.created >= '2026-01-01T00:00:00Z' SORT core.created DESC", []string{"B5", "B4", "B3", "B2"}},
}

func TestExamples(t *testing.T) {
	t.Parallel()
	for _, ex := range examples {
		t.Run(ex.query, func(t *testing.T) {
			t.Parallel()
			got, bound := run(t, ex.query, ex.typ)
			if bound != ex.bound {
				t.Errorf("bound = %q, want %q", bound, ex.bound)
			}
			if diff := cmp.Diff(ex.want, got); diff != "" {
				t.Errorf("found (-want +got):\n%s", diff)
			}
		})
	}
}

// run parses, binds and evaluates query over the records of typ, and
// returns the ids found and the bound query's text.
func run(t *testing.T, query, typ string) ([]string, string) {
	t.Helper()
	q, err := Parse(query, DefaultLimits())
	if err != nil {
		t.Fatalf("Parse(%q): %v", query, err)
	}
	b, err := Bind(q, schema, typ, testInstance)
	if err != nil {
		t.Fatalf("Bind(%q): %v", query, err)
	}
	return find(b, typ), b.String()
}
