package gql_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestReleaseSwap moves an instance to a new release through the admin
// API: the new schema serves at once, the data stays.
func TestReleaseSwap(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b"}, "title": "Kept"}}})
	withISBN := strings.Replace(bookstoreSDL(t), "title: String", "title: String\n  isbn: String", 1)
	c.env.PutRelease("bookstore", "v2", withISBN)

	isbn := `{ get(type: Book, id: "b") { ... on Book { title isbn } } }`
	if status, _, _ := c.fail(isbn, nil); status != 400 {
		t.Fatalf("isbn before the swap: status %d, want 400 (unknown field)", status)
	}
	status, body := c.env.Do("PATCH", "/admin/v1/instances/books.test", c.env.AdminHeaders(), map[string]any{"release": "v2"})
	if status != 200 {
		t.Fatalf("PATCH release: %d %s", status, dump(body))
	}
	got := c.data(isbn, nil)
	if path(got, "get", "title") != "Kept" || path(got, "get", "isbn") != nil {
		t.Errorf("after the swap: %s", dump(got))
	}
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b"}, "isbn": "978-0"}}})
	if v := path(c.data(isbn, nil), "get", "isbn"); v != "978-0" {
		t.Errorf("isbn after write = %v", v)
	}
	meta := c.data(`{ get(type: Book, id: "b") { ... on Book { core { release publisherRelease } } } }`, nil)
	if path(meta, "get", "core", "release") != "v2" {
		t.Errorf("core.release after the swap: %s", dump(meta))
	}
}

// TestRequestErrors checks that bad requests get a clear error naming the
// problem, through the real HTTP server.
func TestRequestErrors(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	deep := "{ __schema { types { fields { type " + strings.Repeat("{ ofType ", 20) + "{ name }" + strings.Repeat(" }", 20) + " } } } }"
	aliases := "{ "
	for i := 0; i < 40; i++ {
		aliases += fmt.Sprintf("a%d: get(type: Book, id: \"x\") { __typename } ", i)
	}
	aliases += "}"
	cases := []struct {
		name       string
		domain     string
		token      string
		query      string
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{"syntax error", c.domain, c.token, "{ find(", 400, "BAD_REQUEST", "Syntax Error"},
		{"unknown field", c.domain, c.token, "{ nope }", 400, "BAD_REQUEST", "nope"},
		{"unknown type", c.domain, c.token, `{ find(type: Nope, arcql: "*") { edges { cursor } } }`, 400, "BAD_REQUEST", "Nope"},
		{"unknown domain", "nowhere.test", c.token, "{ __typename }", 404, "UNKNOWN_DOMAIN", "nowhere.test"},
		{"missing domain", "", c.token, "{ __typename }", 400, "BAD_REQUEST", "core-domain"},
		{"no token", c.domain, "", `{ get(type: Book, id: "x") { __typename } }`, 401, "UNAUTHENTICATED", "authorization"},
		{"wrong token", c.domain, "not-the-token", "{ __typename }", 401, "UNAUTHENTICATED", "token"},
		{"bearer token works", c.domain, "Bearer " + c.token, `{ get(type: Book, id: "x") { __typename } }`, 200, "", ""},
		{"too deep", c.domain, c.token, deep, 400, "TOO_COMPLEX", "deeper than"},
		{"too many aliases", c.domain, c.token, aliases, 400, "TOO_COMPLEX", "aliases"},
		{"too large a document", c.domain, c.token, "{ " + strings.Repeat("__typename ", 7000) + "}", 400, "BAD_REQUEST", "longer than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := c.env.GraphQL(tc.domain, tc.token, tc.query, nil)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", status, tc.wantStatus, dump(body))
			}
			if tc.wantCode == "" {
				if body["errors"] != nil {
					t.Errorf("unexpected errors: %s", dump(body))
				}
				return
			}
			msg, _ := path(body, "errors", 0, "message").(string)
			code, _ := path(body, "errors", 0, "extensions", "code").(string)
			if code != tc.wantCode || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("got %s %q, want %s mentioning %q", code, msg, tc.wantCode, tc.wantMsg)
			}
		})
	}
}

// TestConcurrentFirstUse runs many concurrent requests against a schema
// compiled moments before: graphql-go's lazily built parts must be warm
// (run with -race).
func TestConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.env.PutRelease("bookstore", "fresh", bookstoreSDL(t)+"\nenum Genre { POEM NOVEL }\ntype Shelf { genre: Genre label: String }\n")
	token := c.env.CreateInstance("fresh.test", "bookstore", "fresh", tenant.Settings{})
	f := &client{t: t, env: c.env, domain: "fresh.test", token: token}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			status, body := f.env.GraphQL(f.domain, f.token, upsertDoc, map[string]any{"v": map[string]any{
				"Shelf": map[string]any{"genre": []string{"POEM", "NOVEL"}[i%2], "label": fmt.Sprint(i)},
				"Book":  map[string]any{"title": fmt.Sprint(i), "price": i},
			}})
			if status != 200 || body["errors"] != nil {
				errs <- dump(body)
				return
			}
			status, body = f.env.GraphQL(f.domain, f.token, `{ find(type: Shelf, arcql: "genre = 'POEM'") { edges { node { ... on Shelf { genre label } } } } __schema { types { name } } }`, nil)
			if status != 200 || body["errors"] != nil {
				errs <- dump(body)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := f.names("Shelf", "genre = 'POEM'"); len(got) != 16 {
		t.Errorf("found %d POEM shelves, want 16", len(got))
	}
}

// TestEvictedReleaseAnswers bounds the compiled schemas to one: a release
// published and compiled later evicts the instance's, and the instance still answers
// GraphQL and REST, on its release compiled again from the model.
func TestEvictedReleaseAnswers(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b"}, "title": "Kept"}}})
	rel, ok := c.env.Directory.Release("bookstore", "v1")
	if !ok {
		t.Fatal("no release v1")
	}
	before, err := c.env.Engine.Schema(rel)
	if err != nil {
		t.Fatal(err)
	}

	c.env.Engine.SetSchemaLimit(1)
	c.env.PutRelease("bookstore", "v2", bookstoreSDL(t)+"\ntype Shelf { label: String }\n")
	v2, _ := c.env.Directory.Release("bookstore", "v2")
	if _, err := c.env.Engine.Schema(v2); err != nil { // as a request of an instance of v2 would
		t.Fatal(err)
	}
	if n := c.env.Engine.SchemaCount(); n != 1 {
		t.Fatalf("%d releases compiled, want 1 (the bound)", n)
	}

	got := c.data(`{ get(type: Book, id: "b") { ... on Book { title } } }`, nil)
	if path(got, "get", "title") != "Kept" {
		t.Errorf("after eviction: %s", dump(got))
	}
	status, body := c.env.Do("GET", "/rest/v1/Book/b", map[string]string{tenant.Header: c.domain, "authorization": c.token}, nil)
	if status != 200 || path(body, "data", "find", "edges", 0, "node", "title") != "Kept" {
		t.Errorf("REST after eviction: %d %s", status, dump(body))
	}
	after, err := c.env.Engine.Schema(rel)
	if err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Error("the release answered on the schema it had before eviction; want it compiled again")
	}
	if n := c.env.Engine.SchemaCount(); n != 1 {
		t.Errorf("%d releases compiled after the rebuild, want 1", n)
	}
}
