package rest_test

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/tenant"
)

// step is one request of a scenario and the answer it must get: the
// status and the whole body, compared field by field once generated ids,
// timestamps and tokens are normalised.
type step struct {
	name    string
	method  string
	path    string // under /rest/v1
	headers map[string]string
	noToken bool // send no authorization header
	body    any
	status  int
	want    map[string]any
}

// run plays the steps in order against c.
func run(t *testing.T, c *client, steps []step) {
	t.Helper()
	for _, s := range steps {
		h := c.headers()
		if s.noToken {
			delete(h, "authorization")
		}
		for k, v := range s.headers {
			h[k] = v
		}
		status, body := c.env.Do(s.method, "/rest/v1"+s.path, h, s.body)
		if status != s.status {
			t.Fatalf("%s: %s %s answered %d, want %d:\n%s", s.name, s.method, s.path, status, s.status, dump(body))
		}
		if diff := cmp.Diff(s.want, normalize(body)); diff != "" {
			t.Fatalf("%s: %s %s (-want +got):\n%s", s.name, s.method, s.path, diff)
		}
	}
}

// TestServiceDescription replays every request sample of SERVICE.md
// section 4 (login, record operations, function calls) against a real
// server with the description's Author/Book/URL schema, in an order where
// each builds on the last.
func TestServiceDescription(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, tenant.Settings{})
	q := url.QueryEscape
	b1 := book("Book1", "Wise and Otherwise", 1, 5.99)
	b2 := book("Book2", "Gitanjali", 2, 10)
	b3 := book("Book3", "Gently Falls the Bakula", 1, 7.5)
	b4 := book("Book4", "The Alchemist", 3, 4.5)
	b4cheaper := book("Book4", "The Alchemist", 3, 4)
	sudha := author("Author1", "Sudha Murty", 70, b1, b1, b3)
	sudha71 := author("Author1", "Sudha Murty", 71, b1, b1, b3)
	tagore := author("Author2", "Rabindranath Tagore", 80, nil, b2)
	url1 := map[string]any{"core": coreOf("URL1"), "path": "/home", "queryParams": map[string]any{"utm": "spec"}, "port": float64(443), "host": "example.com"}
	for k, v := range map[string]any{"publisherRealm": "core", "publisherApp": "core", "publisherRelease": "core"} {
		url1["core"].(map[string]any)[k] = v
	}
	urlMeta := meta("URL1", true)
	for k, v := range map[string]any{"publisherRealm": "core", "publisherApp": "core", "publisherRelease": "core"} {
		urlMeta[k] = v
	}

	run(t, c, []step{
		// 4.2 POST /: the body's values hold an array per type…
		{name: "POST / with arrays", method: "POST", path: "/", status: 200,
			body: map[string]any{"values": map[string]any{"Book": []any{
				map[string]any{"core": map[string]any{"id": "Book1"}, "title": "Wise and Otherwise", "authorid": 1, "price": 5.99},
				map[string]any{"core": map[string]any{"id": "Book2"}, "title": "Gitanjali", "authorid": 2, "price": 10},
			}}},
			want: data("upsert", []any{meta("Book1", true), meta("Book2", true)})},
		// …or a single object; records nest referenced records (an existing
		// one by core.id alone, a new one in full).
		{name: "POST / with a single object and nested records", method: "POST", path: "/", status: 200,
			body: map[string]any{"values": map[string]any{"Author": map[string]any{
				"core": map[string]any{"id": "Author1"}, "name": "Sudha Murty", "age": 70,
				"bestbook": map[string]any{"core": map[string]any{"id": "Book1"}},
				"booklist": []any{
					map[string]any{"core": map[string]any{"id": "Book1"}},
					map[string]any{"core": map[string]any{"id": "Book3"}, "title": "Gently Falls the Bakula", "authorid": 1, "price": 7.5},
				},
			}}},
			want: data("upsert", []any{meta("Author1", true)})},
		{name: "POST / with several types", method: "POST", path: "/", status: 200,
			body: map[string]any{"values": map[string]any{
				"Author": []any{map[string]any{"core": map[string]any{"id": "Author2"}, "name": "Rabindranath Tagore", "age": 80,
					"booklist": []any{map[string]any{"core": map[string]any{"id": "Book2"}}}}},
				"URL": map[string]any{"core": map[string]any{"id": "URL1"}, "path": "/home", "queryParams": map[string]any{"utm": "spec"}, "port": 443, "host": "example.com"},
			}},
			want: data("upsert", []any{meta("Author2", true), urlMeta})},
		{name: "GET /{aggregate}/{identifier} with references expanded", method: "GET", path: "/Author/Author1", status: 200,
			want: pageOf(onePage(25), sudha)},
		// 4.2 PUT /: the same body; created is null for an update.
		{name: "PUT / updates", method: "PUT", path: "/", status: 200,
			body: map[string]any{"values": map[string]any{"Author": []any{map[string]any{"core": map[string]any{"id": "Author1"}, "age": 71}}}},
			want: data("upsert", []any{meta("Author1", false)})},
		{name: "GET after PUT: merged, not replaced", method: "GET", path: "/Author/Author1", status: 200,
			want: pageOf(onePage(25), sudha71)},
		{name: "GET a built-in type by id", method: "GET", path: "/URL/URL1", status: 200, want: pageOf(onePage(25), url1)},
		{name: "GET a missing record", method: "GET", path: "/Author/Author9", status: 404,
			want: failure("NOT_FOUND", `Author "Author9" not found`)},
		// 4.2 GET /{aggregate}?arcql&first: pageLimit 25 by default, n with first=n.
		{name: "GET /{aggregate} with arcql", method: "GET", path: "/Book?arcql=" + q("authorid = 1"), status: 200,
			want: pageOf(onePage(25), b1, b3)},
		{name: "GET /{aggregate} with first=2", method: "GET", path: "/Book?arcql=*&first=2", status: 200,
			want: pageOf(map[string]any{"hasPreviousPage": false, "hasNextPage": true, "startCursor": "FIRST", "endCursor": "Book2",
				"pageLimit": float64(2), "previousOffsets": []any{}, "nextOffsets": []any{"Book2"}}, b1, b2)},
		{name: "GET /{aggregate}, the next page", method: "GET", path: "/Book?arcql=*&first=2&after=Book2", status: 200,
			want: pageOf(map[string]any{"hasPreviousPage": true, "hasNextPage": false, "startCursor": "Book3", "endCursor": "LAST",
				"pageLimit": float64(2), "previousOffsets": []any{"FIRST"}, "nextOffsets": []any{}}, b3)},
		{name: "GET /{aggregate} sorted", method: "GET", path: "/Book?arcql=" + q("price > 6 SORT price DESC"), status: 200,
			want: pageOf(onePage(25), b2, b3)},
		{name: "GET /{aggregate} with the filter of a reference hop", method: "GET", path: "/Author?arcql=" + q("booklist.title = 'Gitanjali'"), status: 200,
			want: pageOf(onePage(25), tagore)},
		// 4.3 function calls: built-ins by name.
		{name: "GET /fn/query/find", method: "GET", path: "/fn/query/find?type=Author&arcql=" + q("name = 'Sudha Murty'") + "&first=1", status: 200,
			want: pageOf(onePage(1), sudha71)},
		{name: "GET /fn/query/get", method: "GET", path: "/fn/query/get?type=Book&id=Book2", status: 200, want: data("get", b2)},
		{name: "GET /fn/query/get of nothing", method: "GET", path: "/fn/query/get?type=Book&id=Book9", status: 200, want: data("get", nil)},
		{name: "POST /fn/mutation/upsert", method: "POST", path: "/fn/mutation/upsert", status: 200,
			body: map[string]any{"values": map[string]any{"Book": []any{map[string]any{"core": map[string]any{"id": "Book4"}, "title": "The Alchemist", "authorid": 3, "price": 4.5}}}},
			want: data("upsert", []any{meta("Book4", true)})},
		{name: "POST /fn/query/find", method: "POST", path: "/fn/query/find", status: 200,
			body: map[string]any{"type": "Book", "arcql": "price < 6"},
			want: pageOf(onePage(25), b1, b4)},
		{name: "PUT /fn/mutation/upsert", method: "PUT", path: "/fn/mutation/upsert", status: 200,
			body: map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "Book4"}, "price": 4}}},
			want: data("upsert", []any{meta("Book4", false)})},
		{name: "PUT /fn/query/find", method: "PUT", path: "/fn/query/find", status: 200,
			body: map[string]any{"type": "Book", "arcql": "core.id = 'Book4'"},
			want: pageOf(onePage(25), b4cheaper)},
		// 4.2 DELETE: array references block a delete unless cleared.
		{name: "DELETE /{aggregate}/{identifier} of a listed book", method: "DELETE", path: "/Book/Book1", status: 409,
			want: failure("REFERENCED", "Book Book1 is still referenced by Author.booklist of Author Author1; pass clearArrayReferences=true to remove the references and delete")},
		{name: "nothing was deleted", method: "GET", path: "/Book/Book1", status: 200, want: pageOf(onePage(25), b1)},
		{name: "DELETE /{aggregate}/{identifier}?clearArrayReferences=true", method: "DELETE", path: "/Book/Book1?clearArrayReferences=true", status: 200,
			want: data("delete", float64(1))},
		{name: "deleted", method: "GET", path: "/Book/Book1", status: 404, want: failure("NOT_FOUND", `Book "Book1" not found`)},
		{name: "the references are gone", method: "GET", path: "/Author/Author1", status: 200,
			want: pageOf(onePage(25), author("Author1", "Sudha Murty", 71, nil, b3))},
		{name: "DELETE /{aggregate}/{identifier} of nothing", method: "DELETE", path: "/Book/Book1", status: 200, want: data("delete", float64(0))},
		{name: "DELETE /{aggregate}?arcql of a listed book", method: "DELETE", path: "/Book?arcql=" + q("authorid = 2"), status: 409,
			want: failure("REFERENCED", "Book Book2 is still referenced by Author.booklist of Author Author2; pass clearArrayReferences=true to remove the references and delete")},
		{name: "DELETE /{aggregate}?arcql&clearArrayReferences=true", method: "DELETE", path: "/Book?arcql=" + q("authorid = 2") + "&clearArrayReferences=true", status: 200,
			want: data("delete", float64(1))},
		{name: "DELETE /{aggregate} without arcql", method: "DELETE", path: "/Book", status: 400,
			want: failure("BAD_REQUEST", "parameter arcql is required: it selects the records to delete (arcql=* deletes every Book)")},
		{name: "DELETE /{aggregate}?arcql=* deletes the rest", method: "DELETE", path: "/Book?arcql=*&clearArrayReferences=true", status: 200,
			want: data("delete", float64(2))},
		{name: "no book is left", method: "GET", path: "/Book", status: 200, want: pageOf(onePage(25))},
		{name: "DELETE by /fn/mutation/delete", method: "POST", path: "/fn/mutation/delete", status: 200,
			body: map[string]any{"type": "Author", "arcql": "*"}, want: data("delete", float64(2))},
	})
}

// TestLoginSamples replays SERVICE.md 4.1: login by username and by
// e-mail, by GET with type=query and by POST, with and without an
// authorization header; a failed login is 401 with the same body.
func TestLoginSamples(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, tenant.Settings{})
	const pw = "correct horse battery staple"
	account := meta(anyID, true)
	for k, v := range map[string]any{"publisherRealm": "core", "publisherApp": "core", "publisherRelease": "core"} {
		account[k] = v
	}
	token := map[string]any{"core": nil, "sessionToken": anyToken, "sessionExpires": anyUnix, "errorCode": nil, "errorMsg": nil}
	refused := func(field string) map[string]any {
		return data(field, map[string]any{"core": nil, "sessionToken": nil, "sessionExpires": nil,
			"errorCode": "INVALID_CREDENTIALS", "errorMsg": "invalid " + map[string]string{"login": "username", "loginByEmail": "email"}[field] + " or password"})
	}
	q := url.QueryEscape
	run(t, c, []step{
		{name: "create an account", method: "POST", path: "/fn/mutation/createAccount", status: 200,
			body: map[string]any{"value": map[string]any{"username": "ada", "emails": []any{"ada@example.com"}, "password": map[string]any{"value": pw}}},
			want: data("createAccount", account)},
		{name: "GET /fn/query/login", method: "GET", path: "/fn/query/login?username=ada&password=" + q(pw) + "&type=query", noToken: true,
			status: 200, want: data("login", token)},
		{name: "GET /fn/query/loginByEmail", method: "GET", path: "/fn/query/loginByEmail?email=" + q("ada@example.com") + "&password=" + q(pw) + "&type=query",
			noToken: true, status: 200, want: data("loginByEmail", token)},
		{name: "POST /login by username", method: "POST", path: "/login", noToken: true, body: map[string]any{"username": "ada", "password": pw},
			status: 200, want: data("login", token)},
		{name: "POST /login by e-mail, with authorization", method: "POST", path: "/login", body: map[string]any{"email": "ada@example.com", "password": pw},
			status: 200, want: data("loginByEmail", token)},
		{name: "POST /login, wrong password", method: "POST", path: "/login", noToken: true, body: map[string]any{"username": "ada", "password": "wrong horse"},
			status: 401, want: refused("login")},
		{name: "GET /fn/query/loginByEmail, unknown user", method: "GET", path: "/fn/query/loginByEmail?email=nobody%40example.com&password=x&type=query",
			noToken: true, status: 401, want: refused("loginByEmail")},
		{name: "anonymous callers may log in only", method: "GET", path: "/Book", noToken: true, status: 401,
			want: failure("UNAUTHENTICATED", "authorization required: find needs a token in the authorization header")},
	})

	// The session token works as the authorization of REST calls.
	_, body := c.env.Do("POST", "/rest/v1/login", map[string]string{tenant.Header: c.domain}, map[string]any{"username": "ada", "password": pw})
	session, _ := body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)
	for _, auth := range []string{session, "Bearer " + session} {
		status, got := c.env.Do("GET", "/rest/v1/Book", map[string]string{tenant.Header: c.domain, "authorization": auth}, nil)
		if status != 200 || cmp.Diff(pageOf(onePage(25)), normalize(got)) != "" {
			t.Errorf("GET /Book with the session (%.6s…): %d %s", auth, status, dump(got))
		}
	}
}
