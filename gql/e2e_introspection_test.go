package gql_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// introspectionDocs select __schema or __type in every place a document
// can hide them.
var introspectionDocs = []struct {
	name, query, operation string
}{
	{"__schema", `{ __schema { queryType { name } } }`, ""},
	{"__type", `{ __type(name: "Book") { name kind } }`, ""},
	{"aliased", `{ s: __schema { queryType { name } } }`, ""},
	{"in an inline fragment", `{ ... on Query { __schema { queryType { name } } } }`, ""},
	{"in an untyped inline fragment", `{ ... { __type(name: "Book") { name } } }`, ""},
	{"in a named fragment", `query { ...F } fragment F on Query { __type(name: "Book") { name } }`, ""},
	{"in an inline fragment of a named fragment", `query { ...F } fragment F on Query { ... on Query { __schema { queryType { name } } } }`, ""},
	{"beside a record query", `{ find(type: Book, arcql: "*") { edges { cursor } } __type(name: "Book") { name } }`, ""},
	{"in an operation that is not run", `query A { __typename } query B { __schema { queryType { name } } }`, "A"},
}

// gqlRequest posts a document with an operation name as token.
func gqlRequest(env *servertest.Env, domain, token, query, operation string) (int, map[string]any) {
	h := map[string]string{tenant.Header: domain}
	if token != "" {
		h["authorization"] = token
	}
	body := map[string]any{"query": query}
	if operation != "" {
		body["operationName"] = operation
	}
	return env.Do(http.MethodPost, "/graphql", h, body)
}

// hostile checklist 23: introspection as non-admin (__schema, __type,
// inside inline fragments and named fragments) is refused; the instance
// token may; the setting introspection opens it to account sessions
// ("accounts") and to anonymous callers ("anyone").
func TestIntrospectionByCaller(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	admin := &client{t: t, env: env, domain: "books.test", token: env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{AnonymousRequests: true})}
	admin.newAccount("ada", "", "correct horse battery")
	ada := admin.login("ada", "correct horse battery")

	// The instance token introspects: these are the answers the others
	// get once the setting lets them.
	want := map[string]any{}
	for _, d := range introspectionDocs {
		status, body := gqlRequest(env, admin.domain, admin.token, d.query, d.operation)
		if status != http.StatusOK || body["errors"] != nil || body["data"] == nil {
			t.Fatalf("%s with the instance token: %d %s", d.name, status, dump(body))
		}
		want[d.name] = body["data"]
	}
	if got := path(want["__type"], "__type", "name"); got != "Book" {
		t.Fatalf("__type(name: Book) answered %v", got)
	}

	refused := func(t *testing.T, who, token string, wantStatus int, wantCode string) {
		t.Helper()
		for _, d := range introspectionDocs {
			status, body := gqlRequest(env, admin.domain, token, d.query, d.operation)
			msg, code := servertest.FirstError(body)
			if status != wantStatus || code != wantCode || body["data"] != nil ||
				!strings.Contains(msg, "introspection (__schema, __type)") || !strings.Contains(msg, "setting introspection") {
				t.Errorf("%s, %s: %d %s, want %d %s naming the setting", who, d.name, status, dump(body), wantStatus, wantCode)
			}
		}
	}
	allowed := func(t *testing.T, who, token string) {
		t.Helper()
		for _, d := range introspectionDocs {
			status, body := gqlRequest(env, admin.domain, token, d.query, d.operation)
			if status != http.StatusOK || body["errors"] != nil {
				t.Errorf("%s, %s: %d %s", who, d.name, status, dump(body))
				continue
			}
			if diff := cmp.Diff(want[d.name], body["data"]); diff != "" {
				t.Errorf("%s, %s: not the instance token's answer (-want +got):\n%s", who, d.name, diff)
			}
		}
	}
	typename := func(t *testing.T, who, token string) {
		t.Helper()
		status, body := gqlRequest(env, admin.domain, token, `{ __typename ... on Query { __typename } }`, "")
		if status != http.StatusOK || path(body, "data", "__typename") != "Query" {
			t.Errorf("%s: __typename: %d %s", who, status, dump(body))
		}
	}

	t.Run("by default", func(t *testing.T) {
		if _, body := env.Admin(http.MethodGet, "/instances/books.test", nil); body["introspection"] != "admin" {
			t.Errorf("the admin API shows introspection = %v, want the default admin", body["introspection"])
		}
		refused(t, "an account's session", ada.token, http.StatusForbidden, "FORBIDDEN")
		refused(t, "an anonymous caller", "", http.StatusUnauthorized, "UNAUTHENTICATED")
		typename(t, "an account's session", ada.token)
		typename(t, "an anonymous caller", "")

		// GET /graphql is the same door.
		res, raw := env.DoRaw(http.MethodGet, "/graphql?query="+url.QueryEscape(introspectionDocs[0].query),
			map[string]string{tenant.Header: admin.domain, "authorization": ada.token}, nil)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(string(raw), "FORBIDDEN") {
			t.Errorf("GET /graphql with __schema, an account's session: %d %s", res.StatusCode, raw)
		}

		// So is the WebSocket: the operation ends with the error, and
		// the connection goes on. The validation error of a misspelt
		// field reads as it does over HTTP, without its hint.
		w := ada.dial("graphql-transport-ws", nil)
		w.init(ada)
		w.send(map[string]any{"id": "i", "type": "subscribe", "payload": map[string]any{"query": introspectionDocs[0].query}})
		if m := w.expect("error", "i"); path(m, "payload", 0, "extensions", "code") != "FORBIDDEN" {
			t.Errorf("__schema over the WebSocket, an account's session: %s", dump(m))
		}
		w.send(map[string]any{"id": "e", "type": "subscribe", "payload": map[string]any{"query": `{ find(type: Book, arcql: "*") { edgez { cursor } } }`}})
		if m := w.expect("error", "e"); path(m, "payload", 0, "message") != `Cannot query field "edgez" on an object type.` {
			t.Errorf("a misspelt field over the WebSocket, an account's session: %s", dump(m))
		}
		w.send(map[string]any{"id": "q", "type": "subscribe", "payload": map[string]any{"query": `{ __typename }`}})
		if m := w.expect("next", "q"); path(m, "payload", "data", "__typename") != "Query" {
			t.Errorf("__typename over the WebSocket: %s", dump(m))
		}
	})

	patch := func(t *testing.T, value string) {
		t.Helper()
		status, body := env.Admin(http.MethodPatch, "/instances/books.test", map[string]any{"introspection": value})
		if status != http.StatusOK || body["introspection"] != value {
			t.Fatalf("PATCH introspection %q: %d %s", value, status, dump(body))
		}
	}
	t.Run("accounts", func(t *testing.T) {
		patch(t, "accounts")
		allowed(t, "an account's session", ada.token)
		refused(t, "an anonymous caller", "", http.StatusUnauthorized, "UNAUTHENTICATED")
	})
	t.Run("anyone", func(t *testing.T) {
		patch(t, "anyone")
		allowed(t, "an account's session", ada.token)
		allowed(t, "an anonymous caller", "")
	})
	t.Run("an unknown value", func(t *testing.T) {
		status, body := env.Admin(http.MethodPatch, "/instances/books.test", map[string]any{"introspection": "sometimes"})
		if msg, code := servertest.FirstError(body); status != http.StatusBadRequest || code != "BAD_REQUEST" ||
			!strings.Contains(msg, `introspection must be "admin"`) {
			t.Errorf("PATCH introspection sometimes: %d %s", status, dump(body))
		}
		status, body = env.Admin(http.MethodPost, "/instances", map[string]any{"domain": "other.test", "app": "bookstore", "release": "v1", "introspection": "all"})
		if msg, _ := servertest.FirstError(body); status != http.StatusBadRequest || !strings.Contains(msg, `introspection must be "admin"`) {
			t.Errorf("POST an instance with introspection all: %d %s", status, dump(body))
		}
		if _, body := env.Admin(http.MethodGet, "/instances/books.test", nil); body["introspection"] != "anyone" {
			t.Errorf("a refused PATCH changed the setting to %v", body["introspection"])
		}
	})
	t.Run("back to admin", func(t *testing.T) {
		patch(t, "admin")
		refused(t, "an account's session", ada.token, http.StatusForbidden, "FORBIDDEN")
		allowed(t, "the instance token", admin.token)
	})
}

// badDocuments are documents with mistakes that graphql-go answers with
// suggestions or with the names of generated types; typo is the mistake
// the answer must still name.
var badDocuments = []struct {
	name, query string
	vars        map[string]any
	typo        string
}{
	{"a field of a connection", `{ find(type: Book, arcql: "*") { edgez { cursor } } }`, nil, "edgez"},
	{"an argument", `{ find(type: Book, arcql: "*", frist: 2) { edges { cursor } } }`, nil, "frist"},
	{"a field of a record", `{ get(type: Book, id: "x") { titel } }`, nil, "titel"},
	{"a field of core", `{ find(type: Book, arcql: "*") { edges { node { ... on Book { core { idd } } } } } }`, nil, "idd"},
	{"a record type", `{ get(type: Boook, id: "x") { __typename } }`, nil, "Boook"},
	{"a fragment's type", `{ find(type: Book, arcql: "*") { edges { node { ... on Boo { title } } } } }`, nil, "Boo"},
	{"a selection missing", `{ find(type: Book, arcql: "*") { edges } }`, nil, "edges"},
	{"a variable in the wrong place", `query($t: String) { find(type: $t, arcql: "*") { edges { cursor } } }`, nil, "$t"},
	{"an input field", `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"Book": []any{map[string]any{"titel": "x"}}}}, "titel"},
	{"a default value", `query($n: Int! = 3) { find(type: Book, arcql: "*", first: $n) { edges { cursor } } }`, nil, "$n"},
}

// hostile checklist 23: validation errors to a caller who may not
// introspect contain no "Did you mean" hints and no type names the
// caller's document did not write; the instance token (and whoever the
// setting lets introspect) keeps them.
func TestErrorsHideTheSchema(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL(t))
	admin := &client{t: t, env: env, domain: "books.test", token: env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})}
	admin.newAccount("ada", "", "correct horse battery")
	ada := admin.login("ada", "correct horse battery")
	open := &client{t: t, env: env, domain: "open.test", token: env.CreateInstance("open.test", "bookstore", "v1", tenant.Settings{Introspection: tenant.IntrospectionAccounts})}
	open.newAccount("bob", "", "correct horse battery")
	bob := open.login("bob", "correct horse battery")

	// Every type of the schema, as the instance token reads them.
	d := admin.data(`{ __schema { types { name } } }`, nil)
	var types []string
	for _, ty := range path(d, "__schema", "types").([]any) {
		types = append(types, path(ty, "name").(string))
	}
	public := map[string]bool{"String": true, "Int": true, "Float": true, "Boolean": true, "ID": true,
		"Query": true, "Mutation": true, "Subscription": true, "Json": true, "DateTime": true, "Email": true}
	words := regexp.MustCompile(`[_A-Za-z][_0-9A-Za-z]*`)

	hints := 0
	for _, tc := range badDocuments {
		t.Run(tc.name, func(t *testing.T) {
			// What the caller wrote: the document and the variables.
			vars, _ := json.Marshal(tc.vars)
			written := map[string]bool{}
			for _, w := range words.FindAllString(tc.query+string(vars), -1) {
				written[w] = true
			}
			adminMsgs := messages(t, admin, tc.query, tc.vars)
			adaMsgs := messages(t, ada, tc.query, tc.vars)
			if len(adaMsgs) != len(adminMsgs) {
				t.Fatalf("the account got %d errors, the instance token %d", len(adaMsgs), len(adminMsgs))
			}
			for _, m := range adminMsgs {
				if strings.Contains(m, "Did you mean") {
					hints++
				}
			}
			named := false
			for _, m := range adaMsgs {
				if strings.Contains(m, "Did you mean") || strings.Contains(m, "Perhaps you meant") {
					t.Errorf("a hint to an account: %q", m)
				}
				for _, w := range words.FindAllString(m, -1) {
					if !public[w] && !written[w] && contains(types, w) {
						t.Errorf("the type name %s to an account: %q", w, m)
					}
				}
				named = named || strings.Contains(m, tc.typo)
			}
			if !named {
				t.Errorf("the account's errors do not name %s: %q", tc.typo, adaMsgs)
			}
			// An account that may introspect reads what the instance
			// token reads.
			if diff := cmp.Diff(messages(t, open, tc.query, tc.vars), messages(t, bob, tc.query, tc.vars)); diff != "" {
				t.Errorf("introspection: accounts, the account's errors differ from the instance token's (-token +account):\n%s", diff)
			}
		})
	}
	if hints < 4 {
		t.Errorf("the instance token got %d answers with a hint; the cases are meant to draw them", hints)
	}
}

// messages runs a document that must fail with 400 BAD_REQUEST and
// returns its errors' messages.
func messages(t *testing.T, c *client, query string, vars map[string]any) []string {
	t.Helper()
	status, body := c.do(query, vars)
	errs, _ := body["errors"].([]any)
	if status != http.StatusBadRequest || len(errs) == 0 {
		t.Fatalf("%s: %d %s, want 400", query, status, dump(body))
	}
	var out []string
	for _, e := range errs {
		if code := path(e, "extensions", "code"); code != "BAD_REQUEST" {
			t.Errorf("%s: code %v, want BAD_REQUEST", query, code)
		}
		msg, _ := path(e, "message").(string)
		out = append(out, msg)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
