package tenant_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// twoServers starts two real servers on one fresh MongoDB database, as two
// cored processes behind a load balancer.
func twoServers(t *testing.T) (a, b *servertest.Env) {
	t.Helper()
	stores := mongotest.Shared(t, 2)
	return servertest.Start(t, servertest.WithStore(stores[0])), servertest.Start(t, servertest.WithStore(stores[1]))
}

// TestTwoServersOneDatabase runs two real servers on one MongoDB database,
// as two cored processes behind a load balancer: what is deployed through
// one is served by the other (designed for 2 s: the time taken is logged;
// the bound is a generous 30 s so that a loaded machine never trips it),
// and writes through both at once read back the same through either.
func TestTwoServersOneDatabase(t *testing.T) {
	t.Parallel()
	a, b := twoServers(t)
	sdl := testfiles.Read(t, "e2e", "bookstore.graphql")

	// Deploy through a, serve through b.
	a.PutRelease("bookstore", "v1", sdl)
	token := a.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	within(t, 30*time.Second, "the new instance to serve through b", func() bool {
		status, _ := b.GraphQL("books.test", token, `{ __typename }`, nil)
		return status == http.StatusOK
	})

	// A release swap through a reaches b.
	withISBN := strings.Replace(sdl, "title: String", "title: String\n  isbn: String", 1)
	a.PutRelease("bookstore", "v2", withISBN)
	if status, body := a.Admin(http.MethodPatch, "/instances/books.test", map[string]any{"release": "v2"}); status != http.StatusOK {
		t.Fatalf("PATCH release: %d %v", status, body)
	}
	isbn := `{ find(type: Book, arcql: "*") { edges { node { ... on Book { isbn } } } } }`
	within(t, 30*time.Second, "the swapped release to serve through b", func() bool {
		status, body := b.GraphQL("books.test", token, isbn, nil)
		return status == http.StatusOK && body["errors"] == nil
	})

	// Writes through both at once: records of their own, and fields of one
	// shared record.
	const each = 10
	upsert := `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`
	var wg sync.WaitGroup
	for si, env := range []*servertest.Env{a, b} {
		for i := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, v := range []map[string]any{
					{"Book": map[string]any{"core": map[string]any{"id": fmt.Sprintf("s%d-%02d", si, i)}, "title": "t", "isbn": fmt.Sprint(si)}},
					{"Book": map[string]any{"core": map[string]any{"id": "shared"}, "meta": nil, "tags": []any{fmt.Sprintf("s%d-%02d", si, i)}}},
				} {
					status, body := env.GraphQL("books.test", token, upsert, map[string]any{"v": v})
					if status != http.StatusOK || body["errors"] != nil {
						t.Errorf("upsert through server %d: %d %v", si, status, body)
					}
				}
			}()
		}
	}
	wg.Wait()
	find := `{ find(type: Book, arcql: "* SORT core.id", first: 100) { edges { node { ... on Book { core { id } isbn } } } } }`
	var answers [2][]string
	for si, env := range []*servertest.Env{a, b} {
		status, body := env.GraphQL("books.test", token, find, nil)
		if status != http.StatusOK || body["errors"] != nil {
			t.Fatalf("find through server %d: %d %v", si, status, body)
		}
		data, _ := body["data"].(map[string]any)
		found, _ := data["find"].(map[string]any)
		edges, _ := found["edges"].([]any)
		for _, e := range edges {
			node, _ := e.(map[string]any)["node"].(map[string]any)
			core, _ := node["core"].(map[string]any)
			answers[si] = append(answers[si], fmt.Sprint(core["id"], "/", node["isbn"]))
		}
	}
	if !slices.Equal(answers[0], answers[1]) {
		t.Errorf("the servers disagree:\n a: %v\n b: %v", answers[0], answers[1])
	}
	if len(answers[0]) != 2*each+1 {
		t.Errorf("%d records, want %d: %v", len(answers[0]), 2*each+1, answers[0])
	}
}

// within polls cond until it holds, failing the test after d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
}

// TestTwoServersAgreeOnGrants: a grant made or deleted through one server
// counts on the other after its grants snapshot expires (a second; the
// bound below is generous for a loaded machine, and the time taken is
// logged).
func TestTwoServersAgreeOnGrants(t *testing.T) {
	t.Parallel()
	a, b := twoServers(t)
	a.PutRelease("bookstore", "v1", testfiles.Read(t, "e2e", "bookstore.graphql"))
	token := a.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	within(t, 30*time.Second, "the instance to serve through b", func() bool {
		status, _ := b.GraphQL("books.test", token, `{ __typename }`, nil)
		return status == http.StatusOK
	})
	ids := map[string]string{}
	sessions := map[string]string{}
	for _, u := range []string{"ada", "bob"} {
		_, body := a.GraphQL("books.test", token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
			map[string]any{"v": map[string]any{"username": u, "password": map[string]any{"value": u + "'s password"}}})
		ids[u], _ = body["data"].(map[string]any)["createAccount"].(map[string]any)["id"].(string)
		_, body = a.GraphQL("books.test", "", `query($u: String!, $p: String!) { login(username: $u, password: $p) { sessionToken } }`,
			map[string]any{"u": u, "p": u + "'s password"})
		sessions[u], _ = body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)
		if ids[u] == "" || sessions[u] == "" {
			t.Fatalf("account %s: %v", u, body)
		}
	}
	upsert := `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`
	if _, body := a.GraphQL("books.test", sessions["ada"], upsert, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "adas"}, "title": "Ada's"}}}); body["errors"] != nil {
		t.Fatalf("ada's book: %v", body)
	}
	bobSees := func() bool {
		_, body := b.GraphQL("books.test", sessions["bob"], `{ get(type: Book, id: "adas") { __typename } }`, nil)
		return body["data"].(map[string]any)["get"] != nil
	}
	if bobSees() {
		t.Fatal("bob sees ada's book through b before any grant")
	}
	_, body := a.GraphQL("books.test", sessions["ada"], upsert, map[string]any{"v": map[string]any{"AccessRight": map[string]any{
		"core": map[string]any{"id": "g1"}, "resource": "adas", "resourceType": "Book", "operationType": "Query", "operation": "get",
		"permissionType": "RBP", "members": []any{map[string]any{"core": map[string]any{"id": ids["bob"]}}}}}})
	if body["errors"] != nil {
		t.Fatalf("ada's grant through a: %v", body)
	}
	within(t, 30*time.Second, "ada's grant through a to count on b", bobSees)
	if _, body := a.GraphQL("books.test", sessions["ada"], `mutation { delete(type: AccessRight, arcql: "core.id = \"g1\"") }`, nil); body["errors"] != nil {
		t.Fatalf("deleting the grant through a: %v", body)
	}
	within(t, 30*time.Second, "the deleted grant to stop counting on b", func() bool { return !bobSees() })
}
