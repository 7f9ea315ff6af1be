package gql_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
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

// TestSameIDAcrossInstances: instances A and B of one release both hold
// Book "X" (and Author "au" whose bestbook is X). Every operation on A,
// through GraphQL and through REST, reads only A's X, and after each one
// B's X and au are unchanged, field for field and in their metadata (read
// through the store).
//
// hostile checklist 5: tenants A and B both hold id X; get, find, upsert,
// delete (and aggregate, REST) on A never read or change B's X.
func TestSameIDAcrossInstances(t *testing.T) {
	t.Parallel()
	a := newBookstore(t)
	env := a.env
	b := &client{t: t, env: env, domain: "b.test"}
	b.token = env.CreateInstance(b.domain, "bookstore", "v1", tenant.Settings{})
	for _, c := range []*client{a, b} {
		c.data(upsertDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"core": map[string]any{"id": "au"}, "name": "author in " + c.domain,
			"bestbook": map[string]any{"core": map[string]any{"id": "X"}, "title": "X in " + c.domain, "price": 7}}}})
	}
	instB, ok := env.Directory.Lookup(b.domain)
	if !ok {
		t.Fatal("b.test is not in the directory")
	}
	records := func() map[string]*store.Record {
		t.Helper()
		out := map[string]*store.Record{}
		for typ, id := range map[string]string{"Book": "X", "Author": "au"} {
			rec, err := env.Store.Get(context.Background(), instB.ID, typ, id)
			if err != nil {
				t.Fatalf("reading B's %s %s: %v", typ, id, err)
			}
			out[typ] = rec
		}
		return out
	}
	bBefore := records()
	rest := func(c *client, method, path string, body any) (int, string) {
		t.Helper()
		res, raw := env.DoRaw(method, "/rest/v1"+path, map[string]string{tenant.Header: c.domain, "authorization": c.token}, body)
		return res.StatusCode, string(raw)
	}
	gql := func(c *client, doc string) (int, string) {
		t.Helper()
		status, body := c.do(doc, nil)
		return status, dump(body)
	}
	for _, op := range []struct {
		name string
		run  func() (int, string)
		// want is text A's answer holds; not is text it must not hold.
		want, not string
	}{
		{"get", func() (int, string) { return gql(a, `{ get(type: Book, id: "X") { ... on Book { title } } }`) }, "X in books.test", "b.test"},
		{"find by id", func() (int, string) {
			return gql(a, `{ find(type: Book, arcql: "core.id = 'X'") { edges { node { ... on Book { title } } } } }`)
		}, "X in books.test", "b.test"},
		{"find by B's title", func() (int, string) {
			return gql(a, `{ find(type: Book, arcql: "title = 'X in b.test'") { edges { cursor } } }`)
		}, `"edges": []`, "X"},
		{"reference hop", func() (int, string) {
			return gql(a, `{ find(type: Author, arcql: "bestbook.title = 'X in b.test'") { edges { cursor } } }`)
		}, `"edges": []`, "au"},
		{"reference read", func() (int, string) {
			return gql(a, `{ get(type: Author, id: "au") { ... on Author { bestbook { title } } } }`)
		}, "X in books.test", "b.test"},
		{"aggregate", func() (int, string) {
			return gql(a, `{ aggregate { book(where: "core.id = 'X'") { core { count } price { sum } } } }`)
		}, `"sum": 7`, "14"},
		{"REST get", func() (int, string) { return rest(a, http.MethodGet, "/Book/X", nil) }, "X in books.test", "b.test"},
		{"REST find", func() (int, string) { return rest(a, http.MethodGet, "/Book?arcql=core.id+%3D+%27X%27", nil) }, "X in books.test", "b.test"},
		{"REST aggregate", func() (int, string) { return rest(a, http.MethodGet, "/aggregate/Book?where=core.id+%3D+%27X%27", nil) }, `"count":1`, "b.test"},
		{"upsert", func() (int, string) {
			status, body := a.do(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "X"}, "title": "X changed in A", "price": 8}}})
			return status, dump(body)
		}, `"id": "X"`, "b.test"},
		{"REST PUT", func() (int, string) {
			return rest(a, http.MethodPut, "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "X"}, "title": "X put in A"}}})
		}, `"id":"X"`, "b.test"},
		{"link", func() (int, string) {
			return gql(a, `mutation { link(from: Author, to: Book, via: "booklist", whereFromID: "au", andToID: "X") }`)
		}, "true", "b.test"},
		{"unlink", func() (int, string) {
			return gql(a, `mutation { unlink(from: Author, to: Book, via: "booklist", whereFromID: "au", andToID: "X") }`)
		}, "true", "b.test"},
		{"trash", func() (int, string) { return gql(a, `mutation { trash(type: Book, arcql: "core.id = 'X'") }`) }, `"trash": 1`, "b.test"},
		{"untrash", func() (int, string) { return gql(a, `mutation { untrash(type: Book, arcql: "core.id = 'X'") }`) }, `"untrash": 1`, "b.test"},
		{"delete", func() (int, string) { return gql(a, `mutation { delete(type: Book, arcql: "core.id = 'X'") }`) }, `"delete": 1`, "b.test"},
		{"get after delete", func() (int, string) { return gql(a, `{ get(type: Book, id: "X") { __typename } }`) }, `"get": null`, "b.test"},
		{"REST POST again", func() (int, string) {
			return rest(a, http.MethodPost, "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "X"}, "title": "X again in A"}}})
		}, `"id":"X"`, "b.test"},
		{"REST DELETE by id", func() (int, string) { return rest(a, http.MethodDelete, "/Book/X", nil) }, `"delete":1`, "b.test"},
		{"REST DELETE by filter", func() (int, string) { return rest(a, http.MethodDelete, "/Book?arcql=%2A", nil) }, `"delete":0`, "b.test"},
		{"delete of B's author id", func() (int, string) { return gql(a, `mutation { delete(type: Author, arcql: "core.id = 'au'") }`) }, `"delete": 1`, "b.test"},
	} {
		t.Run(op.name, func(t *testing.T) {
			status, body := op.run()
			if status != 200 || !strings.Contains(body, op.want) || strings.Contains(body, op.not) {
				t.Errorf("on A: %d %s; want 200 holding %q and not %q", status, body, op.want, op.not)
			}
			if diff := cmp.Diff(bBefore, records()); diff != "" {
				t.Errorf("B's records changed (-before +after):\n%s", diff)
			}
		})
	}
	if title := path(b.data(`{ get(type: Author, id: "au") { ... on Author { bestbook { title } } } }`, nil), "get", "bestbook", "title"); title != "X in b.test" {
		t.Errorf("B reads its X through its author: %v", title)
	}
}

// TestDifferentSchemasConcurrently: instance A runs a release whose Item
// has a title, B one whose Item has a weight (the same type name, other
// fields). Queried at once from several goroutines, each sees only its
// own Item: its own field answers, the other's is a validation error, and
// introspection lists its own fields only.
//
// hostile checklist 6: S1 on A and S2 on B, queried concurrently with warm
// caches → each sees only its own types.
func TestDifferentSchemasConcurrently(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	env := c.env
	env.PutRelease("titles", "v1", "type Item { title: String }\ntype OnlyInA { a: Int }\n")
	env.PutRelease("weights", "v1", "type Item { weight: Int }\ntype OnlyInB { b: Int }\n")
	a := &client{t: t, env: env, domain: "a.test"}
	a.token = env.CreateInstance(a.domain, "titles", "v1", tenant.Settings{})
	b := &client{t: t, env: env, domain: "b.test"}
	b.token = env.CreateInstance(b.domain, "weights", "v1", tenant.Settings{})
	a.data(upsertDoc, map[string]any{"v": map[string]any{"Item": map[string]any{"core": map[string]any{"id": "i"}, "title": "a title"}}})
	b.data(upsertDoc, map[string]any{"v": map[string]any{"Item": map[string]any{"core": map[string]any{"id": "i"}, "weight": 42}}})

	type query struct {
		c          *client
		doc, field string
		want       string // text the answer holds
		not        string // text it must not hold
		status     int
	}
	own := func(c *client, field, value, other string) []query {
		return []query{
			{c, `{ get(type: Item, id: "i") { ... on Item { ` + field + ` } } }`, field, value, other, 200},
			{c, `{ get(type: Item, id: "i") { ... on Item { ` + other + ` } } }`, other, "Cannot query field", value, 400},
			{c, `{ __type(name: "Item") { fields { name } } }`, "__type", `"` + field + `"`, `"` + other + `"`, 200},
		}
	}
	queries := append(own(a, "title", `"a title"`, "weight"), own(b, "weight", "42", "title")...)
	queries = append(queries,
		query{a, `{ find(type: OnlyInB, arcql: "*") { edges { cursor } } }`, "find", "OnlyInB", "edges", 400},
		query{b, `{ find(type: OnlyInA, arcql: "*") { edges { cursor } } }`, "find", "OnlyInA", "edges", 400},
	)
	run := func(q query) error {
		body, _ := json.Marshal(map[string]any{"query": q.doc})
		req, err := http.NewRequest(http.MethodPost, env.URL+"/graphql", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("content-type", "application/json")
		req.Header.Set(tenant.Header, q.c.domain)
		req.Header.Set("authorization", q.c.token)
		res, err := env.Client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		out, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		if res.StatusCode != q.status || !strings.Contains(string(out), q.want) || (q.not != "" && strings.Contains(string(out), q.not)) {
			return fmt.Errorf("%s on %s: %d %s; want %d holding %q and not %q", q.doc, q.c.domain, res.StatusCode, out, q.status, q.want, q.not)
		}
		return nil
	}
	// Warm every cache once, then all at once.
	for _, q := range queries {
		if err := run(q); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(queries)*10)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 * len(queries) {
				if err := run(queries[(g+i)%len(queries)]); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
