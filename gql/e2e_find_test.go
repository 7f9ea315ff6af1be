package gql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seedLibrary writes the records the filter tests query.
func seedLibrary(c *client) {
	c.t.Helper()
	book := func(id, title string, authorid int, price float64, extra map[string]any) map[string]any {
		b := map[string]any{"core": map[string]any{"id": id}, "title": title, "authorid": authorid, "price": price}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	ref := func(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}} }
	c.data(upsertDoc, map[string]any{"v": map[string]any{
		"Book": []any{
			book("Book1", "Wise and Otherwise", 1, 5.99, map[string]any{"tags": []any{"classic", "india"}, "meta": map[string]any{"publisher": "Penguin"}}),
			book("Book2", "Alchemist", 2, 5.99, map[string]any{"tags": []any{"novel"}}),
			book("Book3", "Inferno", 3, 12.5, map[string]any{"tags": []any{"classic", "poem"}}),
			book("Book4", "O'Reilly", 1, 3.5, nil),
			book("Book5", "Hamlet", 4, 8, map[string]any{"published": "2020-01-01T00:00:00Z"}),
			book("Book6", "Gitanjali", 5, 20, nil),
		},
	}})
	c.data(upsertDoc, map[string]any{"v": map[string]any{
		"Author": []any{
			map[string]any{"core": map[string]any{"id": "Author1"}, "name": "Sudha Murty", "age": 70, "booklist": []any{ref("Book1"), ref("Book4")}, "bestbook": ref("Book1")},
			map[string]any{"core": map[string]any{"id": "Author2"}, "name": "Paulo Coelho", "age": 75, "booklist": []any{ref("Book2")}, "bestbook": ref("Book2")},
			map[string]any{"core": map[string]any{"id": "Author3"}, "name": "Dante Alighieri", "booklist": []any{ref("Book3")}, "bestbook": ref("Book3")},
			map[string]any{"core": map[string]any{"id": "Author4"}, "name": "William Shakespeare", "age": 52, "booklist": []any{ref("Book5")}},
			map[string]any{"core": map[string]any{"id": "Author5"}, "name": "Pablo Neruda", "age": 69},
		},
	}})
}

// names runs find and returns the name (Author) or title (Book) of each
// record of the page, in order.
func (c *client) names(typ, arcql string) []string {
	c.t.Helper()
	q := `query($t: CoreMutationType!, $q: String!) { find(type: $t, arcql: $q, first: 100) { edges { node { ... on Author { name } ... on Book { title } } } } }`
	d := c.data(q, map[string]any{"t": typ, "q": arcql})
	out := []string{}
	for _, e := range path(d, "find", "edges").([]any) {
		n := path(e, "node").(map[string]any)
		if s, ok := n["name"].(string); ok {
			out = append(out, s)
		} else {
			out = append(out, fmt.Sprint(n["title"]))
		}
	}
	return out
}

// TestArcQL runs every row of docs/arcql.md's table and every one of its
// examples through /graphql.
func TestArcQL(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	seedLibrary(c)
	allBooks := []string{"Wise and Otherwise", "Alchemist", "Inferno", "O'Reilly", "Hamlet", "Gitanjali"}
	cases := []struct {
		name, typ, arcql string
		want             []string
	}{
		// The examples of docs/arcql.md.
		{"example all", "Book", `*`, allBooks},
		{"example equal", "Book", `title = 'Wise and Otherwise'`, []string{"Wise and Otherwise"}},
		{"example core.id", "Author", `core.id = 'Author5'`, []string{"Pablo Neruda"}},
		{"example and", "Book", `price <= 5.99 AND title != 'Alchemist'`, []string{"Wise and Otherwise", "O'Reilly"}},
		{"example or with parentheses", "Book", `(price = 5.99 AND authorid = 1) OR authorid = 2`, []string{"Wise and Otherwise", "Alchemist"}},
		{"example words", "Author", `name ~ 'sudha'`, []string{"Sudha Murty"}},
		{"example prefix", "Author", `name ^ 'Will'`, []string{"William Shakespeare"}},
		{"example wildcard", "Author", `name * 'P*'`, []string{"Paulo Coelho", "Pablo Neruda"}},
		{"example range", "Author", `age IN (50, 70]`, []string{"Sudha Murty", "William Shakespeare", "Pablo Neruda"}},
		{"example not exist", "Author", `NOT EXIST age`, []string{"Dante Alighieri"}},
		{"example escaped quote", "Book", `title = 'O\'Reilly'`, []string{"O'Reilly"}},
		{"example list reference hop", "Author", `booklist.title = 'Inferno'`, []string{"Dante Alighieri"}},
		{"example sort", "Book", `* SORT price DESC, title`, []string{"Gitanjali", "Inferno", "Hamlet", "Alchemist", "Wise and Otherwise", "O'Reilly"}},
		{"example created sort", "Book", `core.created >= '2026-01-01T00:00:00Z' SORT core.created DESC`, allBooks},
		// The rows of the Meaning table.
		{"not equal", "Book", `title != 'Alchemist'`, []string{"Wise and Otherwise", "Inferno", "O'Reilly", "Hamlet", "Gitanjali"}},
		{"less", "Book", `price < 5.99`, []string{"O'Reilly"}},
		{"greater or equal", "Book", `price >= 12.5`, []string{"Inferno", "Gitanjali"}},
		{"greater", "Book", `price > 5.99`, []string{"Inferno", "Hamlet", "Gitanjali"}},
		{"list some element equals", "Book", `tags = 'classic'`, []string{"Wise and Otherwise", "Inferno"}},
		{"list no element equals", "Book", `tags != 'classic' AND EXIST tags`, []string{"Alchemist"}},
		{"equal null is not exist", "Author", `age = null`, []string{"Dante Alighieri"}},
		{"exist", "Book", `EXIST published`, []string{"Hamlet"}},
		{"words need every word", "Book", `title ~ 'otherwise WISE'`, []string{"Wise and Otherwise"}},
		{"words match whole words", "Book", `title ~ 'wis'`, []string{}},
		{"prefix is case-sensitive", "Author", `name ^ 'will'`, []string{}},
		{"wildcard single character", "Book", `title * 'Hamle?'`, []string{"Hamlet"}},
		{"wildcard must match the whole value", "Book", `title * 'Ham'`, []string{}},
		{"range inclusive", "Book", `price IN [5.99, 8]`, []string{"Wise and Otherwise", "Alchemist", "Hamlet"}},
		{"range half open", "Book", `price IN [3.5, 5.99)`, []string{"O'Reilly"}},
		{"range exclusive", "Book", `price IN (5.99, 8)`, []string{}},
		{"single reference hop", "Author", `bestbook.title ^ 'Wise'`, []string{"Sudha Murty"}},
		{"list reference hop with comparison", "Author", `booklist.price > 10`, []string{"Dante Alighieri"}},
		{"timestamp field", "Book", `published < '2021-01-01T00:00:00Z'`, []string{"Hamlet"}},
		{"quoted number on an Int field", "Book", `authorid = '2'`, []string{"Alchemist"}},
		{"number on a String field", "Book", `title = 5`, []string{}},
		{"path into Json", "Book", `meta.publisher = 'Penguin'`, []string{"Wise and Otherwise"}},
		{"not", "Book", `NOT price > 5.99`, []string{"Wise and Otherwise", "Alchemist", "O'Reilly"}},
		{"keywords are case-insensitive", "Book", `price > 10 and NOT title = 'Inferno' sort price desc`, []string{"Gitanjali"}},
		{"empty query matches all", "Book", ``, allBooks},
		{"created in the future", "Book", `core.created >= '2999-01-01T00:00:00Z'`, []string{}},
		{"missing sort keys first ascending", "Author", `* SORT age`, []string{"Dante Alighieri", "William Shakespeare", "Pablo Neruda", "Sudha Murty", "Paulo Coelho"}},
		{"missing sort keys last descending", "Author", `* SORT age DESC`, []string{"Paulo Coelho", "Sudha Murty", "Pablo Neruda", "William Shakespeare", "Dante Alighieri"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, c.names(tc.typ, tc.arcql)); diff != "" {
				t.Errorf("%s on %s (-want +got):\n%s", tc.arcql, tc.typ, diff)
			}
		})
	}
}

func TestArcQLErrors(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	q := `query($q: String!) { find(type: Book, arcql: $q) { edges { cursor } } }`
	cases := []struct{ name, arcql, want string }{
		{"parse error with position", `title =`, "1:8"},
		{"unknown field", `titel = 'x'`, "unknown field Book.titel"},
		{"literal does not fit", `price = 'abc'`, "price"},
		{"too long", strings.Repeat("title = 'x' OR ", 400) + "title = 'x'", "4096"},
		{"too many comparisons", strings.Repeat("price = 1 OR ", 120) + "price = 1", "100"},
		{"hidden field", `password = 'x'`, "password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "hidden field" {
				q = `query($q: String!) { find(type: Account, arcql: $q) { edges { cursor } } }`
			}
			_, msg, code := c.fail(q, map[string]any{"q": tc.arcql})
			if code != "BAD_FILTER" || !strings.Contains(msg, tc.want) {
				t.Errorf("got %s %q, want BAD_FILTER mentioning %q", code, msg, tc.want)
			}
		})
	}
}
