package gql_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestHypiTodoApp publishes a to-do schema written as Hypi's example apps
// write theirs (metadata declared, hypi read as core) and runs such an
// app's documents through graphql-js (e2e-clients/hypi-todo.mjs) on both
// stores, as every server test here: the client builds the introspected schema and validates
// each document against it; sign-up with emails: [{value: $email}], login
// by e-mail and by name, upsert through CoreUpsertInputUnion, get and find
// with fragments selecting core { id }, an interface (Item, implemented by
// TodoItem and Note: a list typed by it, find over it, inline fragments,
// core.impl), and delete with a defaulted $clearArrayReferences answer as
// the app expects.
func TestHypiTodoApp(t *testing.T) {
	t.Parallel()
	node, script := nodetest.Script(t, "Hypi to-do app test", filepath.Join("e2e-clients", "hypi-todo.mjs"), "graphql")
	env := servertest.Start(t)
	env.PutRelease("todo", "v1", testfiles.Read(t, "e2e", "hypi-todo.graphql"))
	token := env.CreateInstance("todo.test", "todo", "v1", tenant.Settings{})
	// A bound on the whole run against a hang, not a timing assertion.
	nodetest.RunOK(t, node, script, "CORE_URL="+env.URL, "CORE_DOMAIN=todo.test", "CORE_TOKEN="+token)
}

// TestHypiScalars publishes a schema using Hypi's scalars Any and UUID and
// writes through GraphQL and REST (on both stores, as every server test
// here): a UUID is validated (a bad one refuses the whole batch, naming
// the field) and kept in lower case, where ArcQL finds it; Any takes any
// JSON value, as Json.
func TestHypiScalars(t *testing.T) {
	t.Parallel()
	c := newApp(t, "tags", "tags.test", "type Tag {\n  core: Core\n  ref: UUID @unique\n  data: Any\n}")
	env := c.env
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}
	const ref = "123E4567-E89B-12D3-A456-426614174000"
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Tag": []any{
		map[string]any{"ref": ref, "data": map[string]any{"n": 1.5, "list": []any{"a", true}}}}}})
	status, body := env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": map[string]any{"Tag": map[string]any{
		"ref": "00000000-0000-4000-8000-000000000001", "data": "text"}}})
	if status != 200 {
		t.Fatalf("REST upsert: %d %s", status, dump(body))
	}
	found := c.data(`{ find(type: Tag, arcql: "ref = '123e4567-e89b-12d3-a456-426614174000'") { edges { node { ... on Tag { ref data } } } } }`, nil)
	want := []any{map[string]any{"node": map[string]any{"ref": strings.ToLower(ref), "data": map[string]any{"n": 1.5, "list": []any{"a", true}}}}}
	if diff := cmp.Diff(want, path(found, "find", "edges")); diff != "" {
		t.Errorf("the tag by its UUID (-want +got):\n%s", diff)
	}
	for _, bad := range []any{"123e4567e89b12d3a456426614174000", "not a uuid", 7.0} {
		vals := map[string]any{"Tag": []any{map[string]any{"ref": "00000000-0000-4000-8000-000000000002"}, map[string]any{"ref": bad}}}
		_, msg, code := c.fail(upsertDoc, map[string]any{"v": vals})
		if code != "BAD_REQUEST" || !strings.Contains(msg, "ref") || !strings.Contains(msg, "UUID") {
			t.Errorf("ref %v through GraphQL: %s %q; want BAD_REQUEST naming ref and UUID", bad, code, msg)
		}
		status, body := env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": vals})
		if msg, _ := servertest.FirstError(body); status == 200 || !strings.Contains(msg, "UUID") {
			t.Errorf("ref %v through REST: %d %s; want an error naming UUID", bad, status, dump(body))
		}
	}
	if n := len(path(c.data(`{ find(type: Tag, arcql: "*") { edges { cursor } } }`, nil), "find", "edges").([]any)); n != 2 {
		t.Errorf("%d tags, want 2: a refused batch wrote some of its records", n)
	}
}

// TestHypiLong: Long keeps 64-bit integers exact through GraphQL (a
// literal, a variable, a string of digits) and REST, on both stores, and
// ArcQL compares them exactly: 9007199254740993 (2^53 + 1) is not
// 9007199254740992.
func TestHypiLong(t *testing.T) {
	t.Parallel()
	c := newApp(t, "big", "big.test", "scalar Long\ntype Counter {\n  core: Core\n  n: Long\n  ns: [Long!]\n}")
	env := c.env
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}
	const big = "9007199254740993"
	c.data(`mutation { upsert(values: {Counter: [{core: {id: "lit"}, n: 9007199254740993, ns: [9223372036854775807, -9223372036854775808]}]}) { id } }`, nil)
	status, raw := env.DoRaw(http.MethodPost, "/graphql", h, map[string]any{
		"query":     `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		"variables": json.RawMessage(`{"v": {"Counter": [{"core": {"id": "var"}, "n": 9007199254740993}, {"core": {"id": "str"}, "n": "9007199254740993"}, {"core": {"id": "low"}, "n": 9007199254740992}]}}`),
	})
	if status.StatusCode != 200 || strings.Contains(string(raw), "errors") {
		t.Fatalf("upsert with variables: %d %s", status.StatusCode, raw)
	}
	resp, raw := env.DoRaw(http.MethodPost, "/rest/v1/", h, json.RawMessage(`{"values": {"Counter": {"core": {"id": "rest"}, "n": 9007199254740993}}}`))
	if resp.StatusCode != 200 {
		t.Fatalf("REST upsert: %d %s", resp.StatusCode, raw)
	}
	for _, id := range []string{"lit", "var", "str", "rest"} {
		_, raw := env.DoRaw(http.MethodPost, "/graphql", h, map[string]any{"query": `{ get(type: Counter, id: "` + id + `") { ... on Counter { n } } }`})
		if !strings.Contains(string(raw), `"n":`+big) {
			t.Errorf("%s through GraphQL: %s; want n %s exactly", id, raw, big)
		}
		_, raw = env.DoRaw(http.MethodGet, "/rest/v1/Counter/"+id, h, nil)
		if !strings.Contains(string(raw), `"n":`+big) {
			t.Errorf("%s through REST: %s; want n %s exactly", id, raw, big)
		}
	}
	_, raw = env.DoRaw(http.MethodPost, "/graphql", h, map[string]any{"query": `{ get(type: Counter, id: "lit") { ... on Counter { ns } } }`})
	if !strings.Contains(string(raw), `[9223372036854775807,-9223372036854775808]`) {
		t.Errorf("the extremes: %s", raw)
	}
	ids := func(arcql string) string {
		got := c.data(`query($q: String!) { find(type: Counter, arcql: $q) { edges { node { ... on Counter { core { id } } } } } }`, map[string]any{"q": arcql})
		var out []string
		for _, e := range path(got, "find", "edges").([]any) {
			out = append(out, path(e, "node", "core", "id").(string))
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	for q, want := range map[string]string{
		"n = 9007199254740993":                            "lit,rest,str,var",
		"n = 9007199254740992":                            "low",
		"n > 9007199254740992":                            "lit,rest,str,var",
		"n < 9007199254740993":                            "low",
		"n IN [9007199254740993, 9007199254740993]":       "lit,rest,str,var",
		"ns = 9223372036854775807":                        "lit",
		"ns = -9223372036854775808":                       "lit",
		"n >= 9007199254740993 AND n <= 9007199254740993": "lit,rest,str,var",
	} {
		if got := ids(q); got != want {
			t.Errorf("find %q: %s, want %s", q, got, want)
		}
	}
	for _, bad := range []any{"12x", 1.5, "99999999999999999999", true} {
		_, msg, code := c.fail(upsertDoc, map[string]any{"v": map[string]any{"Counter": map[string]any{"n": bad}}})
		if code != "BAD_REQUEST" || !strings.Contains(msg, "Long") {
			t.Errorf("n %v: %s %q; want BAD_REQUEST naming Long", bad, code, msg)
		}
	}
}

// TestHypiUpsertReplacesReferenceList: an upsert that names a list of
// references on an existing record replaces the list (as it replaces
// every field it names), through GraphQL and REST on both stores; link
// appends one reference and unlink removes one.
func TestHypiUpsertReplacesReferenceList(t *testing.T) {
	t.Parallel()
	c := newApp(t, "lists", "lists.test", "type Todo {\n  core: Core\n  title: String\n}\ntype TodoList {\n  core: Core\n  name: String\n  items: [Todo!]\n}")
	env := c.env
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}
	todo := func(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}, "title": id} }
	c.data(upsertDoc, map[string]any{"v": map[string]any{"TodoList": map[string]any{"core": map[string]any{"id": "l"}, "name": "home",
		"items": []any{todo("a"), todo("b")}}}})
	items := func() string {
		got := c.data(`{ get(type: TodoList, id: "l") { ... on TodoList { name items { core { id } } } } }`, nil)
		var ids []string
		for _, e := range path(got, "get", "items").([]any) {
			ids = append(ids, path(e, "core", "id").(string))
		}
		if path(got, "get", "name") != "home" {
			t.Errorf("name changed: %s", dump(got))
		}
		return strings.Join(ids, ",")
	}
	c.data(upsertDoc, map[string]any{"v": map[string]any{"TodoList": map[string]any{"core": map[string]any{"id": "l"}, "items": []any{todo("c")}}}})
	if got := items(); got != "c" {
		t.Errorf("after an upsert of [c] through GraphQL: %s, want c (replaced)", got)
	}
	status, body := env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": map[string]any{"TodoList": map[string]any{
		"core": map[string]any{"id": "l"}, "items": []any{map[string]any{"core": map[string]any{"id": "a"}}, todo("d")}}}})
	if status != 200 {
		t.Fatalf("REST upsert: %d %s", status, dump(body))
	}
	if got := items(); got != "a,d" {
		t.Errorf("after an upsert of [a, d] through REST: %s, want a,d (replaced)", got)
	}
	c.data(`mutation { link(from: TodoList, to: Todo, via: "items", whereFromID: "l", andToID: "b") }`, nil)
	if got := items(); got != "a,d,b" {
		t.Errorf("after link of b: %s, want a,d,b (appended)", got)
	}
}

// TestHypiSubscriptionShape: Hypi's subscription document, subscribe
// { Author { name } }, watches the record types its selection names
// (over SSE, on both stores) beside Core's subscribe(type, …): a change
// of a Book reaches only the subscriber selecting Book, and each field
// named after a type reads the record when the change is of that type.
func TestHypiSubscriptionShape(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	authors := c.sse(`subscription { subscribe { Author { name } } }`, nil, nil)
	both := c.sse(`subscription { subscribe { op Author { name } Book { title } } }`, nil, nil)
	c.upsertOne("Book", map[string]any{"title": "Dune"})
	c.upsertOne("Author", map[string]any{"name": "ann"})
	ev := authors.next()
	if got := path(ev.data, "data", "subscribe", "Author", "name"); ev.event != "next" || got != "ann" {
		t.Fatalf("Hypi-shaped Author subscription, first event: %s %s; want ann's creation (the Book is not its type)", ev.event, dump(ev.data))
	}
	ev = both.next()
	if path(ev.data, "data", "subscribe", "Book", "title") != "Dune" || path(ev.data, "data", "subscribe", "Author") != nil {
		t.Errorf("Author and Book subscription, first event: %s; want the book", dump(ev.data))
	}
	ev = both.next()
	if path(ev.data, "data", "subscribe", "Author", "name") != "ann" || path(ev.data, "data", "subscribe", "Book") != nil {
		t.Errorf("Author and Book subscription, second event: %s; want ann", dump(ev.data))
	}
	resp, cancel := c.sseRequest(`subscription { subscribe { op } }`, nil, nil)
	defer cancel()
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "subscribe { Author { name } }") {
		t.Errorf("a subscribe naming no type: %d %s; want 400 saying how to name one", resp.StatusCode, b)
	}
}

// TestHypiFieldGroupValues: groupValues reads inside each field's
// aggregates, as Hypi has it (price { avg groupValues { key value } }),
// the same as the group's own, through GraphQL and REST's query document
// (on both stores); ungrouped, it is empty.
func TestHypiFieldGroupValues(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	for i, b := range []map[string]any{{"title": "a", "price": 10.0, "authorid": 1}, {"title": "b", "price": 20.0, "authorid": 1}, {"title": "c", "price": 5.0, "authorid": 2}} {
		b["core"] = map[string]any{"id": fmt.Sprintf("b%d", i)}
		c.upsertOne("Book", b)
	}
	got := c.data(`{ aggregate {
		bookWith(groupBy: [{field: authorid}]) { groupValues { key value } price { avg groupValues { key value } } authorid { sum groupValues { value } } title { count groupValues { key } } }
		book { price { avg groupValues { key } } }
	} }`, nil)
	want := map[string]any{"aggregate": map[string]any{
		"bookWith": []any{
			map[string]any{"groupValues": []any{map[string]any{"key": "authorid", "value": "1"}},
				"price":    map[string]any{"avg": 15.0, "groupValues": []any{map[string]any{"key": "authorid", "value": "1"}}},
				"authorid": map[string]any{"sum": 2.0, "groupValues": []any{map[string]any{"value": "1"}}},
				"title":    map[string]any{"count": 2.0, "groupValues": []any{map[string]any{"key": "authorid"}}}},
			map[string]any{"groupValues": []any{map[string]any{"key": "authorid", "value": "2"}},
				"price":    map[string]any{"avg": 5.0, "groupValues": []any{map[string]any{"key": "authorid", "value": "2"}}},
				"authorid": map[string]any{"sum": 2.0, "groupValues": []any{map[string]any{"value": "2"}}},
				"title":    map[string]any{"count": 1.0, "groupValues": []any{map[string]any{"key": "authorid"}}}},
		},
		"book": map[string]any{"price": map[string]any{"avg": 35.0 / 3, "groupValues": []any{}}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aggregates (-want +got):\n%s", diff)
	}
}

// TestHypiAccountPhones writes and reads Account.phones in Hypi's shape
// (on both stores, as every server test here): createAccount takes
// phones: [{number, code}] beside emails: [{value: $email}], an account
// reads them back as { number code } and changes its own, a phone without
// its number is refused naming the field and writes nothing.
func TestHypiAccountPhones(t *testing.T) {
	t.Parallel()
	c := newApp(t, "todo", "todo.test", testfiles.Read(t, "e2e", "hypi-todo.graphql"))
	env := c.env
	const signUp = `mutation($email: String!, $code: String) {
	  createAccount(value: {username: "ada", password: {value: "ada horse battery"}, emails: [{value: $email}],
	    phones: [{number: "1234567", code: $code}, {number: "7654321"}]}) { id }
	}`
	id := path(c.data(signUp, map[string]any{"email": "ada@example.com", "code": "+65"}), "createAccount", "id").(string)
	login := c.data(`{ loginByEmail(email: "ada@example.com", password: "ada horse battery") { sessionToken } }`, nil)
	ada := &client{t: t, env: env, domain: c.domain, token: path(login, "loginByEmail", "sessionToken").(string)}
	const me = `query($id: String!) { get(type: Account, id: $id) { ... on Account { emails { value type } phones { number code } } } }`
	want := map[string]any{
		"emails": []any{map[string]any{"value": "ada@example.com", "type": nil}},
		"phones": []any{map[string]any{"number": "1234567", "code": "+65"}, map[string]any{"number": "7654321", "code": nil}},
	}
	if diff := cmp.Diff(want, path(ada.data(me, map[string]any{"id": id}), "get")); diff != "" {
		t.Errorf("ada's emails and phones (-want +got):\n%s", diff)
	}
	ada.data(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": id},
		"phones": []any{map[string]any{"number": "5550000", "code": "+1"}}}}})
	if got := path(ada.data(me, map[string]any{"id": id}), "get", "phones"); !cmp.Equal(got, []any{map[string]any{"number": "5550000", "code": "+1"}}) {
		t.Errorf("ada's phones after her upsert: %s", dump(got))
	}
	_, msg, code := c.fail(`mutation { createAccount(value: {username: "bob", password: {value: "bob horse battery"}, phones: [{code: "+44"}]}) { id } }`, nil)
	if code != "BAD_REQUEST" || !strings.Contains(msg, "number") {
		t.Errorf("a phone without its number: %s %q; want BAD_REQUEST naming number", code, msg)
	}
	if l := c.data(`{ login(username: "bob", password: "bob horse battery") { sessionToken } }`, nil); path(l, "login", "sessionToken") != nil {
		t.Errorf("bob was created by a refused sign-up")
	}
}
