package gql_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

const (
	grantDoc     = `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`
	bookTitles   = `query($q: String!, $n: Int, $after: String) { find(type: Book, arcql: $q, first: $n, after: $after) { edges { cursor node { ... on Book { title } } } pageInfo { hasNextPage } } }`
	getBookTitle = `query($id: String!) { get(type: Book, id: $id) { ... on Book { title } } }`
)

// books upserts books titled as given, as c, and returns their ids.
func (c *client) books(titles ...string) []string {
	c.t.Helper()
	var list []any
	for _, t := range titles {
		list = append(list, map[string]any{"title": t, "price": 10})
	}
	var ids []string
	for _, m := range path(c.data(grantDoc, map[string]any{"v": map[string]any{"Book": list}}), "upsert").([]any) {
		ids = append(ids, m.(map[string]any)["id"].(string))
	}
	return ids
}

// titles returns the titles of every Book c may find, sorted, reading the
// pages of n records one after another.
func (c *client) titles(n int) []string { return c.pagedTitles(bookTitles, "*", n) }

// pagedTitles returns the titles of every record doc (a find taking $q,
// $n and $after, selecting cursor, node { title } and hasNextPage) finds
// with q, sorted, reading pages of n: each page before the last must be
// full.
func (c *client) pagedTitles(doc, q string, n int) []string {
	c.t.Helper()
	out := []string{}
	var after any
	for {
		d := c.data(doc, map[string]any{"q": q, "n": n, "after": after})
		edges := path(d, "find", "edges").([]any)
		for _, e := range edges {
			out = append(out, path(e, "node", "title").(string))
		}
		if path(d, "find", "pageInfo", "hasNextPage") != true {
			break
		}
		if len(edges) != n {
			c.t.Fatalf("a page before the last holds %d records, want %d (pages must be full)", len(edges), n)
		}
		after = path(edges[len(edges)-1], "cursor")
	}
	sort.Strings(out)
	return out
}

// grant upserts one AccessRight as c and returns its id.
func (c *client) grant(v map[string]any) string {
	c.t.Helper()
	return path(c.data(grantDoc, map[string]any{"v": map[string]any{"AccessRight": v}}), "upsert", 0, "id").(string)
}

func members(ids ...string) []any {
	var out []any
	for _, id := range ids {
		out = append(out, map[string]any{"core": map[string]any{"id": id}})
	}
	return out
}

func TestGrantsMakeRecordsReadable(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	admin.newAccount("ada", "", "correct horse battery")
	bobID := admin.newAccount("bob", "", "correct horse battery")
	admin.newAccount("cy", "", "correct horse battery")
	ada, bob, cy := admin.login("ada", "correct horse battery"), admin.login("bob", "correct horse battery"), admin.login("cy", "correct horse battery")
	adas := ada.books("a1", "a2", "a3")
	bob.books("b1", "b2")

	if diff := cmp.Diff([]string{"b1", "b2"}, bob.titles(2)); diff != "" {
		t.Fatalf("bob without grants (-want +got):\n%s", diff)
	}
	if got := path(bob.data(getBookTitle, map[string]any{"id": adas[0]}), "get"); got != nil {
		t.Fatalf("bob gets ada's book without a grant: %v", got)
	}
	// A reference may name a record one cannot read: it is stored, and
	// reads as null through the reference until a grant shows it.
	ref := map[string]any{"v": map[string]any{"Author": map[string]any{"name": "bob", "bestbook": map[string]any{"core": map[string]any{"id": adas[0]}}}}}
	early := path(bob.data(grantDoc, ref), "upsert", 0, "id").(string)
	bestbook := `query($id: String!) { get(type: Author, id: $id) { ... on Author { bestbook { title } } } }`
	if got := path(bob.data(bestbook, map[string]any{"id": early}), "get", "bestbook"); got != nil {
		t.Fatalf("bob reads ada's book through his reference without a grant: %v", got)
	}

	// One record, to bob: get, find (pages stay full) and references.
	one := ada.grant(map[string]any{"resource": adas[0], "resourceType": "Book", "operationType": "Query", "operation": "get",
		"permissionType": "RBP", "members": members(bobID)})
	if got := path(bob.data(getBookTitle, map[string]any{"id": adas[0]}), "get", "title"); got != "a1" {
		t.Errorf("bob gets the granted book: %v, want a1", got)
	}
	if diff := cmp.Diff([]string{"a1", "b1", "b2"}, bob.titles(2)); diff != "" {
		t.Errorf("bob finds his and the granted book (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, cy.titles(2)); diff != "" {
		t.Errorf("cy, not a member, finds (-want +got):\n%s", diff)
	}
	d := bob.data(grantDoc, ref)
	author := path(d, "upsert", 0, "id").(string)
	for _, id := range []string{author, early} {
		got := bob.data(bestbook, map[string]any{"id": id})
		if path(got, "get", "bestbook", "title") != "a1" {
			t.Errorf("bob's author's bestbook, ada's granted book: %s", dump(got))
		}
	}

	// Reading is not changing: the grant is Query only.
	if _, _, code := bob.fail(grantDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": adas[0]}, "title": "mine"}}}); code != "FORBIDDEN" {
		t.Errorf("bob changes a book he may only read: code %q, want FORBIDDEN", code)
	}
	bob.data(`mutation { delete(type: Book, arcql: "*") }`, nil)
	if got := path(ada.data(getBookTitle, map[string]any{"id": adas[0]}), "get", "title"); got != "a1" {
		t.Errorf("bob's delete of every book he may see took ada's granted book: %v", got)
	}

	// Every record of ada's, present and future, to every account.
	all := ada.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "*", "operation": "find",
		"permissionType": "RBP", "members": members("*")})
	ada.books("a4")
	if diff := cmp.Diff([]string{"a1", "a2", "a3", "a4"}, cy.titles(3)); diff != "" {
		t.Errorf("cy with ada's wildcard grant (-want +got):\n%s", diff)
	}

	// A grant counts only while approved and between its dates.
	ada.data(grantDoc, map[string]any{"v": map[string]any{"AccessRight": map[string]any{"core": map[string]any{"id": all}, "approved": false}}})
	if diff := cmp.Diff([]string{}, cy.titles(3)); diff != "" {
		t.Errorf("cy after the grant was disapproved (-want +got):\n%s", diff)
	}
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	ada.data(grantDoc, map[string]any{"v": map[string]any{"AccessRight": map[string]any{"core": map[string]any{"id": all}, "approved": true, "endDate": past}}})
	if diff := cmp.Diff([]string{}, cy.titles(3)); diff != "" {
		t.Errorf("cy after the grant ended (-want +got):\n%s", diff)
	}
	ada.data(grantDoc, map[string]any{"v": map[string]any{"AccessRight": map[string]any{"core": map[string]any{"id": all}, "endDate": nil, "startDate": past}}})
	if diff := cmp.Diff([]string{"a1", "a2", "a3", "a4"}, cy.titles(3)); diff != "" {
		t.Errorf("cy after the grant started (-want +got):\n%s", diff)
	}

	// Deleting a grant revokes it for the next request.
	ada.data(`mutation($id: String!) { delete(type: AccessRight, arcql: $id) }`, map[string]any{"id": `core.id = "` + one + `"`})
	ada.data(`mutation($id: String!) { delete(type: AccessRight, arcql: $id) }`, map[string]any{"id": `core.id = "` + all + `"`})
	if got := path(bob.data(getBookTitle, map[string]any{"id": adas[0]}), "get"); got != nil {
		t.Errorf("bob gets the book after the grant was deleted: %v", got)
	}
	if diff := cmp.Diff([]string{}, bob.titles(2)); diff != "" {
		t.Errorf("bob after the grants were deleted (-want +got):\n%s", diff)
	}
}

func TestGrantRules(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	ada, bob, adaID, bobID := admin.adaAndBob()
	adas := ada.books("a1")
	bobs := bob.books("b1")
	countGrants := func() int {
		return len(path(admin.data(`{ find(type: AccessRight, arcql: "*") { edges { cursor } } }`, nil), "find", "edges").([]any))
	}

	for _, tc := range []struct {
		name string
		v    map[string]any
		code string
	}{
		{"an SBP by an account", map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "SBP", "members": members("*")}, "FORBIDDEN"},
		{"a record of another account", map[string]any{"resource": adas[0], "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": members(bobID)}, "FORBIDDEN"},
		{"a record that does not exist", map[string]any{"resource": "nope", "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": members(bobID)}, "FORBIDDEN"},
		{"another owner", map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "RBP", "resourceOwnerId": adaID, "members": members(bobID)}, "FORBIDDEN"},
		{"an unknown operation", map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "frobnicate", "permissionType": "RBP", "members": members(bobID)}, "BAD_REQUEST"},
		{"an unknown type", map[string]any{"resource": "*", "resourceType": "Nope", "operationType": "Query", "operation": "find", "permissionType": "RBP", "members": members(bobID)}, "BAD_REQUEST"},
		{"one record of any type", map[string]any{"resource": bobs[0], "resourceType": "*", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": members(adaID)}, "BAD_REQUEST"},
	} {
		if _, msg, code := bob.fail(grantDoc, map[string]any{"v": map[string]any{"AccessRight": tc.v}}); code != tc.code {
			t.Errorf("%s: code %q (%s), want %s", tc.name, code, msg, tc.code)
		}
	}
	if n := countGrants(); n != 0 {
		t.Fatalf("refused grants created %d AccessRight records", n)
	}

	// The instance token grants an SBP: every account reads every Book.
	admin.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "SBP", "members": members("*")})
	if diff := cmp.Diff([]string{"a1", "b1"}, bob.titles(1)); diff != "" {
		t.Errorf("bob with the SBP (-want +got):\n%s", diff)
	}

	// An account's grant is owned by it, and a grantee does not see it.
	id := bob.grant(map[string]any{"resource": bobs[0], "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": members(adaID)})
	got := admin.data(`query($id: String!) { get(type: AccessRight, id: $id) { ... on AccessRight { resourceOwnerId members { core { id } } } } }`, map[string]any{"id": id})
	if path(got, "get", "resourceOwnerId") != bobID {
		t.Errorf("resourceOwnerId of bob's grant = %v, want bob", path(got, "get", "resourceOwnerId"))
	}
	if got := path(ada.data(`query($id: String!) { get(type: AccessRight, id: $id) { ... on AccessRight { resource } } }`, map[string]any{"id": id}), "get"); got != nil {
		t.Errorf("ada sees the grant made to her: %v", got)
	}
	// A grant to the special members "*" and "anonymous" is stored as given.
	anon := admin.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "SBP", "members": members("anonymous", "*")})
	got = admin.data(`query($id: String!) { get(type: AccessRight, id: $id) { ... on AccessRight { core { id } } } }`, map[string]any{"id": anon})
	if path(got, "get", "core", "id") != anon {
		t.Errorf("the grant to anonymous and * reads back as %s", dump(got))
	}
}

func TestWriteGrants(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	ada, bob, adaID, bobID := admin.adaAndBob()
	adas := ada.books("a1", "a2", "a3")
	rename := func(c *client, id, title string) string {
		c.t.Helper()
		_, body := c.do(grantDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": id}, "title": title}}})
		_, code := servertest.FirstError(body)
		return code
	}
	count := func(c *client, doc string) float64 {
		c.t.Helper()
		d := c.data(doc, nil)
		for _, v := range d {
			return v.(float64)
		}
		return -1
	}

	ada.grant(map[string]any{"resource": adas[0], "resourceType": "Book", "operationType": "Mutation", "operation": "upsert", "permissionType": "RBP", "members": members(bobID)})
	if code := rename(bob, adas[0], "bob's edit"); code != "" {
		t.Fatalf("bob updates the book he holds an upsert grant on: %s", code)
	}
	got := admin.data(`query($id: String!) { get(type: Book, id: $id) { ... on Book { title core { createdBy } } } }`, map[string]any{"id": adas[0]})
	if path(got, "get", "title") != "bob's edit" || path(got, "get", "core", "createdBy") != adaID {
		t.Errorf("after bob's granted edit: %s, want bob's title and ada still the creator", dump(got))
	}
	if code := rename(bob, adas[1], "not his"); code != "FORBIDDEN" {
		t.Errorf("bob updates a book without a grant: %q, want FORBIDDEN", code)
	}
	// An upsert grant lets bob write the book, not read it.
	if got := path(bob.data(getBookTitle, map[string]any{"id": adas[0]}), "get"); got != nil {
		t.Errorf("bob reads a book he may only update: %v", got)
	}

	// Bulk changes touch only what the caller may change.
	if n := count(bob, `mutation { trash(type: Book, arcql: "*") }`); n != 0 {
		t.Errorf("bob trashed %v of ada's books without a trash grant", n)
	}
	ada.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Mutation", "operation": "delete", "permissionType": "RBP", "members": members(bobID)})
	if n := count(bob, `mutation { delete(type: Book, arcql: "title = \"a2\"") }`); n != 1 {
		t.Errorf("bob deleted %v books with a delete grant on all of ada's, want 1", n)
	}
	if n := count(bob, `mutation { trash(type: Book, arcql: "*") }`); n != 0 {
		t.Errorf("a delete grant let bob trash %v books", n)
	}
	titles := admin.titles(10)
	if diff := cmp.Diff([]string{"a3", "bob's edit"}, titles); diff != "" {
		t.Errorf("ada's books after bob's bulk changes (-want +got):\n%s", diff)
	}

	// link needs a link grant on the record linked from.
	author := path(ada.data(grantDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"name": "ada"}}}), "upsert", 0, "id").(string)
	bobs := bob.books("b1")
	linkDoc := `mutation($a: String!, $b: String!) { link(from: Author, via: "booklist", to: Book, whereFromID: $a, andToID: $b) }`
	ada.grant(map[string]any{"resource": author, "resourceType": "Author", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": members(bobID)})
	if _, _, code := bob.fail(linkDoc, map[string]any{"a": author, "b": bobs[0]}); code != "FORBIDDEN" {
		t.Errorf("bob links from an author he may only read: %q, want FORBIDDEN", code)
	}
	ada.grant(map[string]any{"resource": author, "resourceType": "Author", "operationType": "Mutation", "operation": "link", "permissionType": "RBP", "members": members(bobID)})
	bob.data(linkDoc, map[string]any{"a": author, "b": bobs[0]})
	got = admin.data(`query($id: String!) { get(type: Author, id: $id) { ... on Author { booklist { title } } } }`, map[string]any{"id": author})
	if diff := cmp.Diff([]any{map[string]any{"title": "b1"}}, path(got, "get", "booklist")); diff != "" {
		t.Errorf("ada's author after bob's granted link (-want +got):\n%s", diff)
	}
}

func TestAnonymousCallersReadWhatIsGranted(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	admin.token = admin.env.CreateInstance("open.test", "bookstore", "v1", tenant.Settings{AnonymousRequests: true})
	admin.domain = "open.test"
	anon := &client{t: t, env: admin.env, domain: "open.test"}
	ids := admin.books("x1", "x2")

	if diff := cmp.Diff([]string{}, anon.titles(5)); diff != "" {
		t.Errorf("anonymous find without grants (-want +got):\n%s", diff)
	}
	if got := path(anon.data(getBookTitle, map[string]any{"id": ids[0]}), "get"); got != nil {
		t.Errorf("anonymous get without grants: %v", got)
	}
	if _, _, code := anon.fail(grantDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"title": "anon's"}}}); code != "FORBIDDEN" {
		t.Errorf("anonymous create without a grant: %q, want FORBIDDEN", code)
	}

	admin.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "SBP", "members": members("anonymous")})
	if diff := cmp.Diff([]string{"x1", "x2"}, anon.titles(1)); diff != "" {
		t.Errorf("anonymous find with an SBP to anonymous (-want +got):\n%s", diff)
	}
	if got := path(anon.data(getBookTitle, map[string]any{"id": ids[0]}), "get", "title"); got != "x1" {
		t.Errorf("anonymous get with the grant: %v", got)
	}
	// Reading is not writing, and grants and accounts are never anonymous's.
	if _, _, code := anon.fail(grantDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": ids[0]}, "title": "defaced"}}}); code != "FORBIDDEN" {
		t.Errorf("anonymous update with a read grant: %q, want FORBIDDEN", code)
	}
	if _, _, code := anon.fail(grantDoc, map[string]any{"v": map[string]any{"AccessRight": map[string]any{"resource": "*", "resourceType": "Book",
		"operationType": "*", "operation": "*", "permissionType": "SBP", "members": members("anonymous")}}}); code != "FORBIDDEN" {
		t.Errorf("anonymous grant: %q, want FORBIDDEN", code)
	}
	admin.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Mutation", "operation": "upsert", "permissionType": "SBP", "members": members("anonymous")})
	anon.data(grantDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"title": "x3"}}})
	if diff := cmp.Diff([]string{"x1", "x2", "x3"}, anon.titles(2)); diff != "" {
		t.Errorf("anonymous find after its granted create (-want +got):\n%s", diff)
	}

	// The same through REST.
	status, body := admin.env.Do("GET", "/rest/v1/Book", map[string]string{tenant.Header: "open.test"}, nil)
	if status != 200 || !strings.Contains(dump(body), `"x3"`) {
		t.Errorf("anonymous REST GET /Book with the grant: %d %s", status, dump(body))
	}
	// Where anonymous requests are off, a grant to anonymous changes nothing.
	closed := &client{t: t, env: admin.env, domain: "books.test"}
	if status, _ := closed.do(`{ find(type: Book, arcql: "*") { edges { cursor } } }`, nil); status != 401 {
		t.Errorf("anonymous find where anonymous requests are off: %d, want 401", status)
	}
}

func TestGrantedFields(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	ada, bob, _, bobID := admin.adaAndBob()
	adas := ada.books("a1")
	read := `query($id: String!) { get(type: Book, id: $id) { ... on Book { title price } } }`

	if _, _, code := ada.fail(grantDoc, map[string]any{"v": map[string]any{"AccessRight": map[string]any{"resource": adas[0], "resourceType": "Book",
		"operationType": "Query", "operation": "get", "permissionType": "RBP", "fields": "title,nope", "members": members(bobID)}}}); code != "BAD_REQUEST" {
		t.Errorf("a grant naming an unknown field: %q, want BAD_REQUEST", code)
	}
	ada.grant(map[string]any{"resource": adas[0], "resourceType": "Book", "operationType": "Query", "operation": "get", "permissionType": "RBP",
		"fields": "title", "members": members(bobID)})
	if diff := cmp.Diff(map[string]any{"title": "a1", "price": nil}, path(bob.data(read, map[string]any{"id": adas[0]}), "get")); diff != "" {
		t.Errorf("get through a title-only grant (-want +got):\n%s", diff)
	}
	d := bob.data(`{ find(type: Book, arcql: "*") { edges { node { ... on Book { title price } } } } }`, nil)
	if diff := cmp.Diff(map[string]any{"title": "a1", "price": nil}, path(d, "find", "edges", 0, "node")); diff != "" {
		t.Errorf("find through a title-only grant (-want +got):\n%s", diff)
	}
	// A hidden field cannot be probed by filtering or sorting on it, nor
	// by aggregating under such a filter.
	found := func(arcql string) int {
		t.Helper()
		return len(path(bob.data(`query($q: String!) { find(type: Book, arcql: $q) { edges { cursor } } }`, map[string]any{"q": arcql}), "find", "edges").([]any))
	}
	counted := func(where string) any {
		t.Helper()
		return path(bob.data(`query($w: String) { aggregate { book(where: $w) { core { count } } } }`, map[string]any{"w": where}), "aggregate", "book", "core", "count")
	}
	for _, c := range []struct {
		arcql string
		want  int
	}{{`title = "a1"`, 1}, {"price = 10", 0}, {"price != 10", 0}, {"NOT EXIST price", 0}, {"* SORT price", 0}, {"* SORT title", 1}} {
		if got := found(c.arcql); got != c.want {
			t.Errorf("bob's find %q through a title-only grant: %d records, want %d", c.arcql, got, c.want)
		}
	}
	if got := counted("price = 10"); got != float64(0) {
		t.Errorf("bob's aggregate where price = 10: %v, want 0", got)
	}
	if got := counted(`title = "a1"`); got != float64(1) {
		t.Errorf("bob's aggregate where title = a1: %v, want 1", got)
	}
	// A second grant without a fields list shows every field.
	all := ada.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "RBP", "members": members(bobID)})
	if diff := cmp.Diff(map[string]any{"title": "a1", "price": float64(10)}, path(bob.data(read, map[string]any{"id": adas[0]}), "get")); diff != "" {
		t.Errorf("get with a grant of every field too (-want +got):\n%s", diff)
	}
	ada.data(`mutation($q: String!) { delete(type: AccessRight, arcql: $q) }`, map[string]any{"q": `core.id = "` + all + `"`})

	// Writing: only the listed fields may be set.
	ada.grant(map[string]any{"resource": adas[0], "resourceType": "Book", "operationType": "Mutation", "operation": "upsert", "permissionType": "RBP",
		"fields": "price", "members": members(bobID)})
	if _, msg, code := bob.fail(grantDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": adas[0]}, "price": 12, "title": "bob's"}}}); code != "FORBIDDEN" || !strings.Contains(msg, "title") {
		t.Errorf("a grantee sets a field its grant does not list: %q %s, want FORBIDDEN naming title", code, msg)
	}
	bob.data(grantDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": adas[0]}, "price": 12}}})
	if diff := cmp.Diff(map[string]any{"title": "a1", "price": float64(12)}, path(ada.data(read, map[string]any{"id": adas[0]}), "get")); diff != "" {
		t.Errorf("ada's book after bob's granted and refused writes (-want +got):\n%s", diff)
	}
}

func TestTeamsGrantThroughTheirMembers(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	admin.env.PutRelease("teams", "v1", bookstoreSDL(t)+"\ntype Team { name: String colleagues: [Account!] }\n")
	admin.token = admin.env.CreateInstance("teams.test", "teams", "v1", tenant.Settings{})
	admin.domain = "teams.test"
	admin.newAccount("ada", "", "correct horse battery")
	bobID := admin.newAccount("bob", "", "correct horse battery")
	cyID := admin.newAccount("cy", "", "correct horse battery")
	ada, bob, cy := admin.login("ada", "correct horse battery"), admin.login("bob", "correct horse battery"), admin.login("cy", "correct horse battery")
	ada.books("a1", "a2")
	team := path(admin.data(grantDoc, map[string]any{"v": map[string]any{"Team": map[string]any{"name": "editors", "colleagues": members(bobID)}}}), "upsert", 0, "id").(string)

	bad := map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "RBP",
		"membersSourceType": "Team", "membersSourceField": "name", "membersSourceId": team}
	if _, _, code := ada.fail(grantDoc, map[string]any{"v": map[string]any{"AccessRight": bad}}); code != "BAD_REQUEST" {
		t.Errorf("a members source that is not a list of accounts: %q, want BAD_REQUEST", code)
	}
	ada.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "RBP",
		"membersSourceType": "Team", "membersSourceField": "colleagues", "membersSourceId": team})
	if diff := cmp.Diff([]string{"a1", "a2"}, bob.titles(1)); diff != "" {
		t.Errorf("bob, a colleague (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, cy.titles(1)); diff != "" {
		t.Errorf("cy, not yet a colleague (-want +got):\n%s", diff)
	}
	// Linking and unlinking on the team grants and revokes at once.
	link := `mutation($t: String!, $a: String!) { link(from: Team, via: "colleagues", to: Account, whereFromID: $t, andToID: $a) }`
	unlink := `mutation($t: String!, $a: String!) { unlink(from: Team, via: "colleagues", to: Account, whereFromID: $t, andToID: $a) }`
	admin.data(link, map[string]any{"t": team, "a": cyID})
	if diff := cmp.Diff([]string{"a1", "a2"}, cy.titles(1)); diff != "" {
		t.Errorf("cy after joining the team (-want +got):\n%s", diff)
	}
	admin.data(unlink, map[string]any{"t": team, "a": bobID})
	if diff := cmp.Diff([]string{}, bob.titles(1)); diff != "" {
		t.Errorf("bob after leaving the team (-want +got):\n%s", diff)
	}
}

// TestBlog runs the worked example of access rights in docs/accounts-and-access.md.
func TestBlog(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("blog", "v1", `type Post { title: String body: String }
type Draft { title: String body: String }
type Team { name: String colleagues: [Account!] }`)
	admin := &client{t: t, env: env, domain: "blog.test", token: env.CreateInstance("blog.test", "blog", "v1", tenant.Settings{AnonymousRequests: true})}
	admin.newAccount("ada", "", "correct horse battery")
	boID := admin.newAccount("bo", "", "correct horse battery")
	admin.newAccount("cy", "", "correct horse battery")
	ada, bo, cy := admin.login("ada", "correct horse battery"), admin.login("bo", "correct horse battery"), admin.login("cy", "correct horse battery")
	anon := &client{t: t, env: env, domain: "blog.test"}
	run := func(c *client, doc string) {
		t.Helper()
		c.data(doc, nil)
	}
	run(admin, `mutation { upsert(values: {AccessRight: {resource: "*", resourceType: "Post",
  operationType: "Query", operation: "*", permissionType: SBP,
  members: [{core: {id: "*"}}, {core: {id: "anonymous"}}]}}) { id } }`)
	run(admin, `mutation { upsert(values: {Team: {core: {id: "editors"}, name: "Editors"}}) { id } }`)
	run(ada, `mutation { upsert(values: {AccessRight: {resource: "*", resourceType: "Draft",
  operationType: "*", operation: "*", fields: "title,body", permissionType: RBP,
  membersSourceType: "Team", membersSourceField: "colleagues", membersSourceId: "editors"}}) { id } }`)
	run(ada, `mutation { upsert(values: {Draft: {core: {id: "d1"}, title: "Soon", body: "…"}}) { id } }`)
	run(ada, `mutation { upsert(values: {Post: {core: {id: "p1"}, title: "Out", body: "!"}}) { id } }`)

	draft := `{ get(type: Draft, id: "d1") { ... on Draft { title } } }`
	post := `{ get(type: Post, id: "p1") { ... on Post { title } } }`
	for name, c := range map[string]*client{"cy": cy, "bo": bo, "anonymous": anon} {
		if got := path(c.data(post, nil), "get", "title"); got != "Out" {
			t.Errorf("%s reads the post: %v", name, got)
		}
		if got := path(c.data(draft, nil), "get"); got != nil {
			t.Errorf("%s reads the draft before joining the editors: %v", name, got)
		}
	}
	run(admin, `mutation { link(from: Team, via: "colleagues", to: Account, whereFromID: "editors", andToID: "`+boID+`") }`)
	if got := path(bo.data(draft, nil), "get", "title"); got != "Soon" {
		t.Errorf("bo, an editor, reads the draft: %v", got)
	}
	run(bo, `mutation { upsert(values: {Draft: {core: {id: "d1"}, title: "Sooner"}}) { id } }`)
	if got := path(ada.data(draft, nil), "get", "title"); got != "Sooner" {
		t.Errorf("ada's draft after bo's edit: %v", got)
	}
	if _, _, code := bo.fail(`mutation { upsert(values: {Post: {core: {id: "p1"}, title: "Defaced"}}) { id } }`, nil); code != "FORBIDDEN" {
		t.Errorf("an editor changes a post: %q, want FORBIDDEN", code)
	}
	run(admin, `mutation { unlink(from: Team, via: "colleagues", to: Account, whereFromID: "editors", andToID: "`+boID+`") }`)
	if got := path(bo.data(draft, nil), "get"); got != nil {
		t.Errorf("bo reads the draft after leaving the editors: %v", got)
	}
}

// TestReferenceFiltersSeeOnlyReadableTargets: a filter through a
// reference (bestbook.price = 99) cannot probe records the caller may not
// read: an unreadable target matches as if it did not match, and a grant
// on the target type lets it match.
func TestReferenceFiltersSeeOnlyReadableTargets(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t)
	bobID := admin.newAccount("bob", "", "correct horse battery")
	bob := admin.login("bob", "correct horse battery")
	admin.data(grantDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"name": "Hidden Hand",
		"bestbook": map[string]any{"title": "Secret", "price": 99}}}})
	admin.grant(map[string]any{"resource": "*", "resourceType": "Author", "operationType": "Query", "operation": "find", "permissionType": "SBP", "members": members(bobID)})
	authors := func(q string) int {
		t.Helper()
		return len(path(bob.data(`query($q: String!) { find(type: Author, arcql: $q) { edges { cursor } } }`, map[string]any{"q": q}), "find", "edges").([]any))
	}
	for q, want := range map[string]int{"*": 1, "bestbook.price = 99": 0, "bestbook.price = 1": 0, "NOT bestbook.price = 99": 1, `bestbook.title = "Secret"`: 0} {
		if got := authors(q); got != want {
			t.Errorf("bob's authors where %s, the book unreadable: %d, want %d", q, got, want)
		}
	}
	if got := path(bob.data(`{ aggregate { author(where: "bestbook.price = 99") { core { count } } } }`, nil), "aggregate", "author", "core", "count"); got != float64(0) {
		t.Errorf("bob's aggregate through the unreadable book: %v, want 0", got)
	}
	// Readable, the book matches.
	admin.grant(map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find", "permissionType": "SBP", "members": members(bobID)})
	if got := authors("bestbook.price = 99"); got != 1 {
		t.Errorf("bob's authors where bestbook.price = 99, the book readable: %d, want 1", got)
	}
}
