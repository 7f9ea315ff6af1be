package gql_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/tenant"
)

// TestFieldsNamedLikeStoreKeys: a schema may name fields _id, tenant,
// i, t, x and f, the names the stores use for their own keys (MongoDB's
// _id and the records' instance, type, trash and fields keys): a record's
// fields are kept apart from them, so such fields are stored, read back,
// filtered and sorted on like any other, on both stores, and never touch
// the record's identity or its instance. $x is no GraphQL name: such an
// SDL is refused with 400 naming the line.
//
// hostile checklist 34: fields named _id and tenant are stored and read
// back; $x is a syntax error.
func TestFieldsNamedLikeStoreKeys(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.env.PutRelease("keys", "v1", `type Item { _id: String tenant: String i: String t: String x: String f: String n: Int }`)
	c.token = c.env.CreateInstance("keys.test", "keys", "v1", tenant.Settings{})
	c.domain = "keys.test"
	other := &client{t: t, env: c.env, domain: "keys2.test", token: c.env.CreateInstance("keys2.test", "keys", "v1", tenant.Settings{})}

	const upsert = `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`
	values := map[string]any{"_id": "not-the-id", "tenant": "keys2.test", "i": "other-instance", "t": "Book", "x": "2026-01-01T00:00:00Z", "f": "fields", "n": 1}
	d := c.data(upsert, map[string]any{"v": map[string]any{"Item": []any{values, map[string]any{"_id": "second", "tenant": "z", "n": 2}}}})
	id, _ := path(d, "upsert", 0, "id").(string)
	if id == "" || id == "not-the-id" {
		t.Fatalf("upsert answered id %q: %s", id, dump(d))
	}
	const sel = `... on Item { _id tenant i t x f n core { id trashed } }`
	got := c.data(`query($id: String!) { get(type: Item, id: $id) { `+sel+` } }`, map[string]any{"id": id})
	want := map[string]any{"_id": "not-the-id", "tenant": "keys2.test", "i": "other-instance", "t": "Book", "x": "2026-01-01T00:00:00Z", "f": "fields", "n": float64(1),
		"core": map[string]any{"id": id, "trashed": nil}}
	if diff := cmp.Diff(want, path(got, "get")); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	for q, wantN := range map[string]int{
		`_id = 'not-the-id'`: 1, `tenant = 'keys2.test'`: 1, `i = 'other-instance' AND t = 'Book'`: 1, `x = '2026-01-01T00:00:00Z'`: 1,
		`f = 'fields'`: 1, `* SORT _id DESC, tenant`: 2, `_id = '` + id + `'`: 0, `NOT EXIST x`: 1,
	} {
		d := c.data(`query($q: String!) { find(type: Item, arcql: $q) { edges { node { ... on Item { _id } } } } }`, map[string]any{"q": q})
		if n := len(path(d, "find", "edges").([]any)); n != wantN {
			t.Errorf("find %q: %d records, want %d", q, n, wantN)
		}
	}
	// The other instance, which the tenant field names, has nothing.
	d = other.data(`{ find(type: Item, arcql: "*") { edges { cursor } } }`, nil)
	if n := len(path(d, "find", "edges").([]any)); n != 0 {
		t.Errorf("the instance named in tenant sees %d records", n)
	}
	// A change of _id changes a field, never the record's id.
	c.data(upsert, map[string]any{"v": map[string]any{"Item": map[string]any{"core": map[string]any{"id": id}, "_id": "changed"}}})
	got = c.data(`query($id: String!) { get(type: Item, id: $id) { `+sel+` } }`, map[string]any{"id": id})
	if path(got, "get", "_id") != "changed" || path(got, "get", "core", "id") != id {
		t.Errorf("after changing _id: %s", dump(got))
	}

	status, body := c.env.Admin(http.MethodPut, "/apps/keys/releases/v2", map[string]any{"schema": `type Item { $x: String }`})
	if msg, code := firstError(body); status != http.StatusBadRequest || code != "BAD_REQUEST" || !strings.Contains(msg, "1:") {
		t.Errorf("an SDL with a field $x: %d %s %q, want 400 naming the place", status, code, msg)
	}
}
