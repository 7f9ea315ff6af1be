package gql_test

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
func (c *client) titles(n int) []string {
	c.t.Helper()
	out := []string{}
	var after any
	for {
		d := c.data(bookTitles, map[string]any{"q": "*", "n": n, "after": after})
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
	// Referencing a record one cannot read is as if it did not exist.
	ref := map[string]any{"v": map[string]any{"Author": map[string]any{"name": "bob", "bestbook": map[string]any{"core": map[string]any{"id": adas[0]}}}}}
	if _, _, code := bob.fail(grantDoc, ref); code != "NOT_FOUND" {
		t.Fatalf("bob references ada's book without a grant: code %q, want NOT_FOUND", code)
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
	got := bob.data(`query($id: String!) { get(type: Author, id: $id) { ... on Author { bestbook { title } } } }`, map[string]any{"id": author})
	if path(got, "get", "bestbook", "title") != "a1" {
		t.Errorf("bob's author's bestbook, ada's granted book: %s", dump(got))
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
	adaID := admin.newAccount("ada", "", "correct horse battery")
	bobID := admin.newAccount("bob", "", "correct horse battery")
	ada, bob := admin.login("ada", "correct horse battery"), admin.login("bob", "correct horse battery")
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
