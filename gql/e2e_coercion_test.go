package gql_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/tenant"
)

// hostile checklist 7: a login whose username (or e-mail, or password)
// is an object such as {"$ne": null} or {"$regex": ".*"}, or a list, is
// 400 naming the variable and its type, and creates no session. The
// accounts here are named what graphql-go's String made of those values
// ("map[$ne:<nil>]"): before the check, such a login found them.
func TestLoginRefusesObjectsForStrings(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	const pw = "correct horse battery"
	for _, name := range []string{"map[$ne:<nil>]", "map[$regex:.*]", "[a]"} {
		c.newAccount(name, "", pw)
	}
	c.newAccount("ada", "ada@example.com", pw)
	// The accounts exist and log in by their names as strings.
	c.login("map[$ne:<nil>]", pw)

	for _, tc := range []struct {
		name, doc string
		vars      map[string]any
		variable  string
		got       string
	}{
		{"$ne for the username", loginDoc, map[string]any{"u": map[string]any{"$ne": nil}, "p": pw}, "$u", "an object"},
		{"$regex for the username", loginDoc, map[string]any{"u": map[string]any{"$regex": ".*"}, "p": pw}, "$u", "an object"},
		{"a list for the username", loginDoc, map[string]any{"u": []any{"a"}, "p": pw}, "$u", "a list"},
		{"$ne for the password", loginDoc, map[string]any{"u": "ada", "p": map[string]any{"$ne": nil}}, "$p", "an object"},
		{"$ne for the e-mail", loginByEmailDoc, map[string]any{"e": map[string]any{"$ne": nil}, "p": pw}, "$e", "an object"},
		{"$gt for the e-mail", loginByEmailDoc, map[string]any{"e": map[string]any{"$gt": ""}, "p": pw}, "$e", "an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := c.env.GraphQL(c.domain, "", tc.doc, tc.vars)
			wantLoginRefused(t, status, body, "variable "+tc.variable+": expected a String, got "+tc.got)
		})
	}

	t.Run("GET /graphql", func(t *testing.T) {
		vars, _ := json.Marshal(map[string]any{"u": map[string]any{"$ne": nil}, "p": pw})
		res, raw := c.env.DoRaw(http.MethodGet, "/graphql?query="+url.QueryEscape(loginDoc)+"&variables="+url.QueryEscape(string(vars)),
			map[string]string{tenant.Header: c.domain}, nil)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatalf("%d %s", res.StatusCode, raw)
		}
		wantLoginRefused(t, res.StatusCode, body, "variable $u: expected a String, got an object")
	})

	t.Run("an object written in the document", func(t *testing.T) {
		status, body := c.env.GraphQL(c.domain, "", `{ login(username: {ne: 1}, password: "x") { sessionToken } }`, nil)
		wantLoginRefused(t, status, body, `Argument "username" has invalid value {ne: 1}.`+"\n"+`Expected type "String"`)
	})
}

// wantLoginRefused checks a 400 BAD_REQUEST whose message starts with
// want, with no data and so no session token.
func wantLoginRefused(t *testing.T, status int, body map[string]any, want string) {
	t.Helper()
	msg, code := firstError(body)
	if status != http.StatusBadRequest || code != "BAD_REQUEST" || !strings.HasPrefix(msg, want) {
		t.Errorf("%d %s, want 400 BAD_REQUEST %q", status, dump(body), want)
	}
	if body["data"] != nil || strings.Contains(dump(body), "sessionToken") {
		t.Errorf("the refused login answered data: %s", dump(body))
	}
}

func firstError(body map[string]any) (message, code string) {
	m, _ := path(body, "errors", 0, "message").(string)
	c, _ := path(body, "errors", 0, "extensions", "code").(string)
	return m, c
}

// hostile checklist 27: Extended-JSON-looking objects ({"$oid": …},
// {"$date": …}, {"$code": …}, {"_bsontype": "Code"}) for a String or
// DateTime field are 400 naming where they are; nothing is stored. A Json
// field takes objects, and a list field a list.
func TestUpsertRefusesObjectsForScalars(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	const upsert = `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`
	book := func(fields map[string]any) map[string]any {
		return map[string]any{"v": map[string]any{"Book": []any{fields}}}
	}
	for _, tc := range []struct {
		name string
		vars map[string]any
		want string
	}{
		{"$oid for a String", book(map[string]any{"title": map[string]any{"$oid": "507f1f77bcf86cd799439011"}}),
			"variable $v.Book[0].title: expected a String, got an object"},
		{"$date for a String", book(map[string]any{"title": map[string]any{"$date": "2026-01-02T15:04:05Z"}}),
			"variable $v.Book[0].title: expected a String, got an object"},
		{"$code for a String", book(map[string]any{"title": map[string]any{"$code": "function () { return 1 }"}}),
			"variable $v.Book[0].title: expected a String, got an object"},
		{"_bsontype for a String", book(map[string]any{"title": map[string]any{"_bsontype": "Code", "code": "x"}}),
			"variable $v.Book[0].title: expected a String, got an object"},
		{"$date for a DateTime", book(map[string]any{"published": map[string]any{"$date": "2026-01-02T15:04:05Z"}}),
			"variable $v.Book[0].published: expected a DateTime (an ISO-8601 timestamp string), got an object"},
		{"$numberInt for an Int", book(map[string]any{"authorid": map[string]any{"$numberInt": "1"}}),
			"variable $v.Book[0].authorid: expected an Int (a whole number), got an object"},
		{"$oid in a list of Strings", book(map[string]any{"tags": []any{"a", map[string]any{"$oid": "x"}}}),
			"variable $v.Book[0].tags[1]: expected a String, got an object"},
		{"a list in a list of Strings", book(map[string]any{"tags": []any{[]any{"a"}}}),
			"variable $v.Book[0].tags[0]: expected a String, got a list"},
		{"the first of two bad fields by name", book(map[string]any{"title": map[string]any{"$oid": "x"}, "price": []any{1}}),
			"variable $v.Book[0].price: expected a Float (a number), got a list"},
		{"a single record for the list", map[string]any{"v": map[string]any{"Book": map[string]any{"title": map[string]any{"$oid": "x"}}}},
			"variable $v.Book.title: expected a String, got an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := c.do(upsert, tc.vars)
			if msg, code := firstError(body); status != http.StatusBadRequest || code != "BAD_REQUEST" || msg != tc.want || body["data"] != nil {
				t.Errorf("%d %s, want 400 BAD_REQUEST %q", status, dump(body), tc.want)
			}
		})
	}

	t.Run("written in the document", func(t *testing.T) {
		status, body := c.do(`mutation { upsert(values: {Book: {title: {_bsontype: "Code", code: "x"}}}) { id } }`, nil)
		if msg, code := firstError(body); status != http.StatusBadRequest || code != "BAD_REQUEST" ||
			!strings.Contains(msg, `In field "title": Expected type "String", found {_bsontype: "Code", code: "x"}`) {
			t.Errorf("%d %s", status, dump(body))
		}
	})

	if n := path(c.data(`{ find(type: Book, arcql: "*") { pageInfo { pageLimit } edges { cursor } } }`, nil), "find", "edges"); len(n.([]any)) != 0 {
		t.Fatalf("refused upserts stored records: %s", dump(n))
	}

	// What fits is stored as sent: objects in a Json field, lists in a
	// list field, a single record for the list of records.
	c.data(upsert, map[string]any{"v": map[string]any{"Book": map[string]any{
		"core": map[string]any{"id": "b1"}, "title": "Dune", "tags": []any{"sf", "classic"}, "meta": map[string]any{"ref": map[string]any{"id": "x1"}, "n": []any{1.0, 2.0}}}}})
	got := c.data(`{ get(type: Book, id: "b1") { ... on Book { title tags meta } } }`, nil)
	if diff := cmp.Diff(map[string]any{"title": "Dune", "tags": []any{"sf", "classic"}, "meta": map[string]any{"ref": map[string]any{"id": "x1"}, "n": []any{1.0, 2.0}}}, got["get"]); diff != "" {
		t.Errorf("the stored book (-want +got):\n%s", diff)
	}
}
