package gql_test

import (
	"github.com/corehq/core/tenant"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDelete(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	seedLibrary(c)
	del := `mutation($q: String!, $clear: Boolean) { delete(type: Book, arcql: $q, clearArrayReferences: $clear) }`

	status, msg, code := c.fail(del, map[string]any{"q": "core.id = 'Book1'"})
	if code != "REFERENCED" || !strings.Contains(msg, "Author.booklist") || status != 200 {
		t.Errorf("delete of a listed book: %d %s %q, want REFERENCED naming Author.booklist", status, code, msg)
	}
	if got := c.names("Book", "core.id = 'Book1'"); len(got) != 1 {
		t.Fatalf("a refused delete removed the book")
	}
	// A book only a single reference points at can go; the reference then
	// reads as null.
	if n := c.data(del, map[string]any{"q": "title = 'Gitanjali'"})["delete"]; n != float64(1) {
		t.Errorf("delete Gitanjali = %v, want 1", n)
	}
	if n := c.data(del, map[string]any{"q": "core.id = 'Book1'", "clear": true})["delete"]; n != float64(1) {
		t.Errorf("delete with clearArrayReferences = %v, want 1", n)
	}
	a := c.data(`{ get(type: Author, id: "Author1") { ... on Author { bestbook { title } booklist { title } } } }`, nil)["get"]
	want := map[string]any{"bestbook": nil, "booklist": []any{map[string]any{"title": "O'Reilly"}}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("Author1 after deleting Book1 (-want +got):\n%s", diff)
	}
	// A delete of several records is refused whole when one is referenced.
	c.data(`mutation { unlink(from: Author, to: Book, via: "booklist", whereFromID: "Author2", andToID: "Book2") }`, nil)
	if _, msg, code := c.fail(del, map[string]any{"q": "price < 6"}); code != "REFERENCED" || !strings.Contains(msg, "Book4") {
		t.Errorf("delete price < 6: %s %q, want REFERENCED naming Book4", code, msg)
	}
	if diff := cmp.Diff([]string{"Alchemist", "O'Reilly"}, c.names("Book", "price < 6")); diff != "" {
		t.Errorf("a refused delete removed records (-want +got):\n%s", diff)
	}
	if n := c.data(del, map[string]any{"q": "price < 6 AND authorid = 2"})["delete"]; n != float64(1) {
		t.Errorf("delete of the unreferenced book = %v, want 1", n)
	}
}

func TestTrash(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	seedLibrary(c)
	if n := c.data(`mutation { trash(type: Book, arcql: "price > 10") }`, nil)["trash"]; n != float64(2) {
		t.Errorf("trash = %v, want 2", n)
	}
	if got := c.names("Book", "*"); len(got) != 4 {
		t.Errorf("find after trash = %v, want 4 books", got)
	}
	d := c.data(`{ find(type: Book, arcql: "price > 10", includeTrashed: true) { edges { node { ... on Book { title core { trashed } } } } } }`, nil)
	edges := path(d, "find", "edges").([]any)
	if len(edges) != 2 || path(edges[0], "node", "core", "trashed") == nil {
		t.Errorf("includeTrashed: %s", dump(d))
	}
	if g := c.data(`{ get(type: Book, id: "Book3") { ... on Book { title } } }`, nil)["get"]; g != nil {
		t.Errorf("get of a trashed record = %v, want null", g)
	}
	if n := c.data(`mutation { trash(type: Book, arcql: "price > 10") }`, nil)["trash"]; n != float64(0) {
		t.Errorf("trash again = %v, want 0 (already trashed)", n)
	}
	if n := c.data(`mutation { untrash(type: Book, arcql: "*") }`, nil)["untrash"]; n != float64(2) {
		t.Errorf("untrash = %v, want 2", n)
	}
	if got := c.names("Book", "*"); len(got) != 6 {
		t.Errorf("find after untrash = %v, want 6 books", got)
	}
}

func TestLink(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	seedLibrary(c)
	list := func() []string {
		d := c.data(`{ get(type: Author, id: "Author5") { ... on Author { booklist { title } bestbook { title } } } }`, nil)
		out := []string{}
		for _, b := range path(d, "get", "booklist").([]any) {
			out = append(out, path(b, "title").(string))
		}
		if bb := path(d, "get", "bestbook", "title"); bb != nil {
			out = append(out, "best:"+bb.(string))
		}
		return out
	}
	link := `mutation($via: String!, $to: String!) { link(from: Author, to: Book, via: $via, whereFromID: "Author5", andToID: $to) }`
	unlink := `mutation($via: String!, $to: String!) { unlink(from: Author, to: Book, via: $via, whereFromID: "Author5", andToID: $to) }`
	steps := []struct {
		doc, via, to string
		want         []string
	}{
		{link, "booklist", "Book6", []string{"Gitanjali"}},
		{link, "booklist", "Book3", []string{"Gitanjali", "Inferno"}},
		{link, "booklist", "Book6", []string{"Gitanjali", "Inferno"}},
		{link, "bestbook", "Book6", []string{"Gitanjali", "Inferno", "best:Gitanjali"}},
		{unlink, "booklist", "Book6", []string{"Inferno", "best:Gitanjali"}},
		{unlink, "bestbook", "Book6", []string{"Inferno"}},
	}
	for i, s := range steps {
		c.data(s.doc, map[string]any{"via": s.via, "to": s.to})
		if diff := cmp.Diff(s.want, list()); diff != "" {
			t.Errorf("step %d (-want +got):\n%s", i, diff)
		}
	}
	if _, msg, code := c.fail(link, map[string]any{"via": "name", "to": "Book6"}); code != "BAD_REQUEST" || !strings.Contains(msg, "Author.name is not a reference to Book") {
		t.Errorf("link via a scalar: %s %q", code, msg)
	}
	if _, msg, code := c.fail(link, map[string]any{"via": "booklist", "to": "Nope"}); code != "NOT_FOUND" {
		t.Errorf("link to a missing record: %s %q", code, msg)
	}
}

func TestInstancesAreIsolated(t *testing.T) {
	t.Parallel()
	one := newBookstore(t)
	two := &client{t: t, env: one.env, domain: "other.test"}
	two.token = one.env.CreateInstance("other.test", "bookstore", "v1", tenant.Settings{})
	for _, c := range []*client{one, two} {
		c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": []any{
			map[string]any{"core": map[string]any{"id": "same"}, "title": "in " + c.domain, "price": 1},
		}}})
	}
	get := `{ get(type: Book, id: "same") { ... on Book { title } } }`
	for _, c := range []*client{one, two} {
		if title := path(c.data(get, nil), "get", "title"); title != "in "+c.domain {
			t.Errorf("%s reads %v", c.domain, title)
		}
		if got := c.names("Book", "*"); len(got) != 1 || got[0] != "in "+c.domain {
			t.Errorf("%s finds %v", c.domain, got)
		}
	}
	// Every write of one instance leaves the other alone.
	one.data(`mutation { trash(type: Book, arcql: "*") }`, nil)
	if got := two.names("Book", "*"); len(got) != 1 {
		t.Errorf("trash in one hid the other's record: %v", got)
	}
	one.data(`mutation { untrash(type: Book, arcql: "*") }`, nil)
	one.data(upsertDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"core": map[string]any{"id": "a"}, "name": "A"}}})
	if _, _, code := two.fail(`mutation { link(from: Author, to: Book, via: "booklist", whereFromID: "a", andToID: "same") }`, nil); code != "NOT_FOUND" {
		t.Errorf("link across instances: code %s, want NOT_FOUND", code)
	}
	if n := one.data(`mutation { delete(type: Book, arcql: "*") }`, nil)["delete"]; n != float64(1) {
		t.Errorf("delete in one = %v", n)
	}
	if title := path(two.data(get, nil), "get", "title"); title != "in other.test" {
		t.Errorf("delete in one removed the other's record: %v", title)
	}
	// One instance's token does not open the other.
	if status, _ := one.env.GraphQL("other.test", one.token, get, nil); status != 401 {
		t.Errorf("one's token on two: status %d, want 401", status)
	}
}
