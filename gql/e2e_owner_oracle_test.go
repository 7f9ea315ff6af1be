package gql_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// owners is an instance where ada and bob each own records, with ada's
// and bob's sessions, and a second instance holding records too.
type owners struct {
	admin, ada, bob, other *client
	inst                   string // the instance id of admin's domain
	adaID, bobID           string
}

func newOwners(t *testing.T) *owners {
	t.Helper()
	admin := newBookstore(t)
	o := &owners{admin: admin}
	o.adaID = admin.newAccount("ada", "ada@example.com", "ada's password")
	o.bobID = admin.newAccount("bob", "bob@example.com", "bob's password")
	o.ada, o.bob = admin.login("ada", "ada's password"), admin.login("bob", "bob's password")
	o.bob.data(upsertDoc, map[string]any{"v": map[string]any{"Book": []any{
		map[string]any{"core": map[string]any{"id": "bob1"}, "title": "bob one", "price": 3, "tags": []any{"x", "y"}, "meta": map[string]any{"k": "v"}},
		map[string]any{"core": map[string]any{"id": "bob2"}, "title": "bob two", "price": 30},
	}}})
	o.ada.data(upsertDoc, map[string]any{"v": map[string]any{"Book": []any{
		map[string]any{"core": map[string]any{"id": "ada1"}, "title": "ada one", "price": 1},
		map[string]any{"core": map[string]any{"id": "ada2"}, "title": "ada two", "price": 20},
	}}})
	o.other = &client{t: t, env: admin.env, domain: "other.test"}
	o.other.token = admin.env.CreateInstance(o.other.domain, "bookstore", "v1", tenant.Settings{})
	o.other.data(upsertDoc, map[string]any{"v": map[string]any{"Book": []any{
		map[string]any{"core": map[string]any{"id": "ada1"}, "title": "other one", "price": 1},
		map[string]any{"core": map[string]any{"id": "o2"}, "title": "other two", "price": 20},
	}}})
	inst, ok := admin.env.Directory.Lookup(admin.domain)
	if !ok {
		t.Fatal("the instance is not in the directory")
	}
	o.inst = inst.ID
	return o
}

// stored reads every Book of an instance through the store, by id.
func (o *owners) stored(t *testing.T, domain string) map[string]*store.Record {
	t.Helper()
	inst, ok := o.admin.env.Directory.Lookup(domain)
	if !ok {
		t.Fatalf("%s is not in the directory", domain)
	}
	recs, err := o.admin.env.Store.Find(context.Background(), inst.ID, &store.Query{Type: "Book", Limit: 1000})
	if err != nil {
		t.Fatalf("reading %s's books: %v", domain, err)
	}
	out := map[string]*store.Record{}
	for _, r := range recs {
		out[r.ID] = r
	}
	return out
}

// restRaw sends a REST request with the client's domain and token.
func (c *client) restRaw(method, target string, body any) (int, string) {
	c.t.Helper()
	res, raw := c.env.DoRaw(method, "/rest/v1"+target, map[string]string{tenant.Header: c.domain, "authorization": c.token}, body)
	return res.StatusCode, strings.TrimSpace(string(raw))
}

// TestOtherAccountsRecordReadsAsMissing: ada's get of bob's record is
// answered exactly as a get of an id that does not exist, body for body,
// through GraphQL (get, find by id, a reference read) and REST (GET by id,
// find by id, aggregate).
//
// hostile checklist 17: user A get(id: B's record) → 404 identical to a
// nonexistent id.
func TestOtherAccountsRecordReadsAsMissing(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	for _, tc := range []struct {
		name string
		ask  func(id string) (int, string)
	}{
		{"get", func(id string) (int, string) {
			s, b := o.ada.do(`query($id: String!) { get(type: Book, id: $id) { ... on Book { title price } } }`, map[string]any{"id": id})
			return s, dump(b)
		}},
		{"get with trashed", func(id string) (int, string) {
			s, b := o.ada.do(`query($id: String!) { get(type: Book, id: $id, includeTrashed: true) { __typename } }`, map[string]any{"id": id})
			return s, dump(b)
		}},
		{"find by id", func(id string) (int, string) {
			s, b := o.ada.do(`query($q: String!) { find(type: Book, arcql: $q) { edges { cursor } pageInfo { hasNextPage } } }`, map[string]any{"q": "core.id = '" + id + "'"})
			return s, dump(b)
		}},
		{"aggregate by id", func(id string) (int, string) {
			s, b := o.ada.do(`query($q: String) { aggregate { book(where: $q) { core { count } price { sum max } } } }`, map[string]any{"q": "core.id = '" + id + "'"})
			return s, dump(b)
		}},
		{"REST GET by id", func(id string) (int, string) {
			s, b := o.ada.restRaw(http.MethodGet, "/Book/"+id, nil)
			return s, strings.ReplaceAll(b, id, "<id>")
		}},
		{"REST find by id", func(id string) (int, string) {
			return o.ada.restRaw(http.MethodGet, "/Book?arcql="+url.QueryEscape("core.id = '"+id+"'"), nil)
		}},
		{"REST aggregate by id", func(id string) (int, string) {
			return o.ada.restRaw(http.MethodGet, "/aggregate/Book?where="+url.QueryEscape("core.id = '"+id+"'"), nil)
		}},
		{"REST DELETE by id", func(id string) (int, string) { return o.ada.restRaw(http.MethodDelete, "/Book/"+id, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, missing := tc.ask("nosuchbook")
			bs, bobs := tc.ask("bob1")
			if bs != ms {
				t.Errorf("bob's record: status %d; a missing id: %d", bs, ms)
			}
			if diff := cmp.Diff(missing, bobs); diff != "" {
				t.Errorf("bob's record answers unlike a missing id (-missing +bob's):\n%s", diff)
			}
			if strings.Contains(bobs, "bob one") {
				t.Errorf("bob's title leaked: %s", bobs)
			}
		})
	}
	if s, b := o.ada.restRaw(http.MethodGet, "/Book/bob1", nil); s != 404 {
		t.Errorf("REST GET of bob's record: %d %s, want 404", s, b)
	}
	if _, ok := o.stored(t, o.admin.domain)["bob1"]; !ok {
		t.Error("bob1 is gone after ada's reads and delete")
	}
}

// TestRefusedUpsertLeavesRecord: ada's upserts of bob's record, through
// GraphQL and REST, in every shape, are refused, and bob's record is
// unchanged byte for byte (every field and all its metadata, read through
// the store); ada gains no ownership.
//
// hostile checklist 18: user A upsert(id: B's record) → rejected; B's
// document byte-for-byte unchanged; A gains no ownership.
func TestRefusedUpsertLeavesRecord(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	before := o.stored(t, o.admin.domain)
	bob1 := map[string]any{"id": "bob1"}
	for _, tc := range []struct {
		name string
		try  func() (int, string)
		code string
	}{
		{"a title", func() (int, string) {
			s, b := o.ada.do(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": bob1, "title": "mine now"}}})
			return s, dump(b)
		}, "FORBIDDEN"},
		{"nothing but the id", func() (int, string) {
			s, b := o.ada.do(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": bob1}}})
			return s, dump(b)
		}, "FORBIDDEN"},
		{"clearing fields", func() (int, string) {
			s, b := o.ada.do(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": bob1, "title": nil, "tags": nil, "meta": nil}}})
			return s, dump(b)
		}, "FORBIDDEN"},
		{"beside a record of her own", func() (int, string) {
			s, b := o.ada.do(upsertDoc, map[string]any{"v": map[string]any{"Book": []any{
				map[string]any{"core": map[string]any{"id": "ada1"}, "title": "ada one changed"},
				map[string]any{"core": bob1, "title": "mine now"},
			}}})
			return s, dump(b)
		}, "FORBIDDEN"},
		{"nested under her author", func() (int, string) {
			s, b := o.ada.do(upsertDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"core": map[string]any{"id": "adas"}, "name": "Ada",
				"bestbook": map[string]any{"core": bob1, "title": "mine now"}}}})
			return s, dump(b)
		}, ""},
		{"REST PUT", func() (int, string) {
			return o.ada.restRaw(http.MethodPut, "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": bob1, "title": "mine now", "price": 0}}})
		}, "FORBIDDEN"},
		{"REST POST", func() (int, string) {
			return o.ada.restRaw(http.MethodPost, "/", map[string]any{"values": map[string]any{"Book": []any{map[string]any{"core": bob1, "title": "mine now"}}}})
		}, "FORBIDDEN"},
		{"REST fn upsert", func() (int, string) {
			return o.ada.restRaw(http.MethodPost, "/fn/mutation/upsert", map[string]any{"values": map[string]any{"Book": map[string]any{"core": bob1, "price": 99}}})
		}, "FORBIDDEN"},
		{"trash", func() (int, string) {
			s, b := o.ada.do(`mutation { trash(type: Book, arcql: "core.id = 'bob1'") }`, nil)
			return s, dump(b)
		}, ""},
		{"link into it", func() (int, string) {
			s, b := o.ada.do(`mutation { link(from: Author, to: Book, via: "booklist", whereFromID: "adas", andToID: "bob1") }`, nil)
			return s, dump(b)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := tc.try()
			if status == 200 && !strings.Contains(body, "errors") && !strings.Contains(body, `"trash": 0`) {
				t.Errorf("ada's write of bob's record succeeded: %d %s", status, body)
			}
			if tc.code != "" && !strings.Contains(body, tc.code) {
				t.Errorf("ada's write of bob's record: %d %s, want %s", status, body, tc.code)
			}
			after := o.stored(t, o.admin.domain)
			if diff := cmp.Diff(before["bob1"], after["bob1"]); diff != "" {
				t.Errorf("bob's record changed (-before +after):\n%s", diff)
			}
			if after["bob1"].CreatedBy != o.bobID {
				t.Errorf("bob1's createdBy = %s, want bob %s", after["bob1"].CreatedBy, o.bobID)
			}
		})
	}
	// Bob still reads and owns it; ada still does not see it.
	if title := path(o.bob.data(`{ get(type: Book, id: "bob1") { ... on Book { title } } }`, nil), "get", "title"); title != "bob one" {
		t.Errorf("bob reads his record as %v", title)
	}
	if got := o.ada.names("Book", "*"); strings.Contains(strings.Join(got, ","), "bob") {
		t.Errorf("ada finds %v", got)
	}
}

// TestHiddenFieldsInBooleanFilters: a hidden or unknown field of Account
// (the password, the session marks) beside a valid term in OR, AND or NOT,
// or in a sort, is BAD_FILTER (400) for the instance token and for a
// session, through GraphQL and REST: never an answer whose size depends on
// the hidden value. Another account's e-mail cannot serve as an oracle:
// ada's find and aggregate of bob's address answer as an address nobody
// has.
//
// hostile checklist 21: hidden fields inside OR/AND/NOT → 400; another
// user's email not a true/false oracle.
func TestHiddenFieldsInBooleanFilters(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	for _, q := range []string{
		"username = 'ada' OR password = 'x'",
		"password = 'x' OR username = 'ada'",
		"username = 'ada' AND password ^ '$argon2id'",
		"NOT password = 'x'",
		"NOT (username = 'nobody' OR EXIST password)",
		"(username = 'ada' AND (username != 'bob' OR password > 'a'))",
		"username = 'ada' OR sessionsAfter > 0",
		"username = 'ada' AND NOT keepSession = 'x'",
		"username = 'ada' OR sessionsUsed.abc > 0",
		"username = 'ada' SORT password",
		"* SORT username, password DESC",
	} {
		for _, who := range []*client{o.admin, o.ada} {
			name := "instance token"
			if who == o.ada {
				name = "ada's session"
			}
			_, msg, code := who.fail(`query($q: String!) { find(type: Account, arcql: $q) { edges { cursor } } }`, map[string]any{"q": q})
			if code != "BAD_FILTER" {
				t.Errorf("%s, find %q: %s %q; want BAD_FILTER", name, q, code, msg)
			}
			if _, _, code := who.fail(`query($q: String) { aggregate { account(where: $q) { core { count } } } }`, map[string]any{"q": q}); code != "BAD_FILTER" && !strings.Contains(q, "SORT") {
				t.Errorf("%s, aggregate where %q: %s; want BAD_FILTER", name, q, code)
			}
			if status, body := who.restRaw(http.MethodGet, "/Account?arcql="+url.QueryEscape(q), nil); status != 400 || !strings.Contains(body, "BAD_FILTER") {
				t.Errorf("%s, REST GET /Account?arcql=%s: %d %s; want 400 BAD_FILTER", name, q, status, body)
			}
		}
	}

	// Bob's e-mail, from ada's session: the answers of an address nobody
	// has, body for body; her own address is found (the filter works).
	ask := func(email string) []string {
		q := "emails = '" + email + "'"
		_, find := o.ada.do(`query($q: String!) { find(type: Account, arcql: $q) { edges { cursor } pageInfo { hasNextPage } } }`, map[string]any{"q": q})
		_, agg := o.ada.do(`query($q: String) { aggregate { account(where: $q) { core { count } } } }`, map[string]any{"q": q})
		_, orq := o.ada.do(`query($q: String!) { find(type: Account, arcql: $q) { edges { cursor } } }`, map[string]any{"q": "username = 'ada' AND " + q})
		_, rest := o.ada.restRaw(http.MethodGet, "/Account?arcql="+url.QueryEscape(q), nil)
		_, restAgg := o.ada.restRaw(http.MethodGet, "/aggregate/Account?where="+url.QueryEscape(q), nil)
		return []string{dump(find), dump(agg), dump(orq), rest, restAgg}
	}
	nobody := ask("nobody@example.com")
	if diff := cmp.Diff(nobody, ask("bob@example.com")); diff != "" {
		t.Errorf("bob's e-mail answers unlike an unknown one (-unknown +bob's):\n%s", diff)
	}
	if own := ask("ada@example.com"); !strings.Contains(own[0], o.adaID) || !strings.Contains(own[1], `"count": 1`) {
		t.Errorf("ada's own e-mail is not found: %v", own)
	}
	// Bob's records are no oracle either: a filter that matches only bob's
	// book answers as one that matches nothing.
	if diff := cmp.Diff(o.ada.names("Book", "title = 'nothing at all'"), o.ada.names("Book", "title = 'bob one' OR price = 30")); diff != "" {
		t.Errorf("a filter matching only bob's books (-nothing +bob's):\n%s", diff)
	}
}

// TestDeleteByFilterOnlyPermitted: REST's delete by filter as a session
// deletes only the caller's own records however wide the filter, and the
// instance token's delete of * removes only its instance's records.
//
// hostile checklist 22: delete-many with a filter matching other users'
// or tenants' docs → only caller-permitted docs affected, through REST.
func TestDeleteByFilterOnlyPermitted(t *testing.T) {
	t.Parallel()
	o := newOwners(t)
	before := o.stored(t, o.admin.domain)
	otherBefore := o.stored(t, o.other.domain)
	del := func(c *client, arcql string) (int, string) {
		return c.restRaw(http.MethodDelete, "/Book?arcql="+url.QueryEscape(arcql), nil)
	}
	// Only bob's records match: nothing deleted.
	for _, q := range []string{"title = 'bob one'", "price = 30", "core.id = 'bob1' OR core.id = 'bob2'", "title ^ 'bob'"} {
		if status, body := del(o.ada, q); status != 200 || body != `{"data":{"delete":0}}` {
			t.Errorf("ada's DELETE /Book?arcql=%s: %d %s, want 0 deleted", q, status, body)
		}
	}
	if diff := cmp.Diff(before, o.stored(t, o.admin.domain)); diff != "" {
		t.Errorf("ada's deletes of bob's records changed the books (-before +after):\n%s", diff)
	}
	// A filter matching every book: only hers go.
	if status, body := del(o.ada, "price > 0"); status != 200 || body != `{"data":{"delete":2}}` {
		t.Errorf("ada's DELETE /Book?arcql=price > 0: %d %s, want 2 deleted (her own)", status, body)
	}
	after := o.stored(t, o.admin.domain)
	if diff := cmp.Diff(map[string]*store.Record{"bob1": before["bob1"], "bob2": before["bob2"]}, after); diff != "" {
		t.Errorf("the books after ada's delete of price > 0 (-want +got):\n%s", diff)
	}
	// The other instance's records, of the same id too, are untouched;
	// and its own delete of * removes only its own.
	if diff := cmp.Diff(otherBefore, o.stored(t, o.other.domain)); diff != "" {
		t.Errorf("the other instance's books changed (-before +after):\n%s", diff)
	}
	if status, body := del(o.other, "*"); status != 200 || body != `{"data":{"delete":2}}` {
		t.Errorf("the other instance's DELETE /Book?arcql=*: %d %s, want 2", status, body)
	}
	if diff := cmp.Diff(after, o.stored(t, o.admin.domain)); diff != "" {
		t.Errorf("the other instance's delete of * changed this one (-before +after):\n%s", diff)
	}
	// Bob's session deletes his own by filter.
	if status, body := del(o.bob, "*"); status != 200 || body != `{"data":{"delete":2}}` {
		t.Errorf("bob's DELETE /Book?arcql=*: %d %s, want 2", status, body)
	}
}
