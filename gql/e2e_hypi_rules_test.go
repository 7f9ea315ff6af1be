package gql_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// rulesSDL declares every validation directive of Hypi's, as a Hypi app
// writes them (metadata declared).
const rulesSDL = `
type Member {
  core: Core
  handle: String @unique @notNull @length(min: 3, max: 12) @pattern(regex: ["[a-z]+[0-9]*"])
  code: String @pattern(regex: ["[A-Z]{2}.*", ".*[0-9]{2}"], allMustMatch: true)
  bio: String @notEmpty
  tags: [String!] @notEmpty @length(max: 5)
  contact: String @email
  born: DateTime @past
  renewal: DateTime @future
  kind: String @immutable
  pin: String @secret
  team: Team @immutable
}

type Team {
  name: String
}

type Roster {
  lead: Member
}
`

// validMember is a Member input every rule accepts.
func validMember(id, handle string) map[string]any {
	return map[string]any{
		"core": map[string]any{"id": id}, "handle": handle, "code": "AB-42", "bio": "hello",
		"tags": []any{"go", "db"}, "contact": handle + "@example.com",
		"born":    "1990-05-01T00:00:00Z",
		"renewal": time.Now().Add(365 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"kind":    "gold", "pin": "1234",
	}
}

// with returns a copy of m with the given fields replaced (nil value:
// the field sent as null; the key "-" deletes the fields listed).
func with(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if k == "-" {
			delete(out, kv[i+1].(string))
			continue
		}
		out[k] = kv[i+1]
	}
	return out
}

// TestHypiValidationDirectives publishes a schema using every validation
// directive and writes through GraphQL and REST (on both stores, as every
// server test here): a valid record is written; each kind of violation is
// refused with BAD_REQUEST naming the type, field and rule, and the batch
// (a valid record beside the bad one) writes nothing.
func TestHypiValidationDirectives(t *testing.T) {
	t.Parallel()
	c := newApp(t, "club", "club.test", rulesSDL)
	env := c.env
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}

	c.data(upsertDoc, map[string]any{"v": map[string]any{"Member": validMember("m1", "alice")}})
	status, body := env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": map[string]any{"Member": validMember("m2", "bob")}})
	if status != 200 {
		t.Fatalf("REST upsert of a valid member: %d %s", status, dump(body))
	}

	base := validMember("m9", "carol")
	yesterday := time.Now().Add(-24 * time.Hour).UTC().Format(time.RFC3339)
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name  string
		bad   map[string]any
		field string
		rule  string
	}{
		{"handle missing at creation", with(base, "core", map[string]any{"id": "x1"}, "-", "handle"), "handle", "@notNull"},
		{"handle null", with(base, "core", map[string]any{"id": "x1"}, "handle", nil), "handle", "@notNull"},
		{"handle too short", with(base, "core", map[string]any{"id": "x1"}, "handle", "ab"), "handle", "@length(min: 3, max: 12)"},
		{"handle too long", with(base, "core", map[string]any{"id": "x1"}, "handle", "abcdefghijklm"), "handle", "@length(min: 3, max: 12)"},
		{"handle off pattern", with(base, "core", map[string]any{"id": "x1"}, "handle", "Dave"), "handle", "@pattern"},
		{"pattern only partly in the value", with(base, "core", map[string]any{"id": "x1"}, "handle", "dave-1"), "handle", "@pattern"},
		{"code matches one of all", with(base, "core", map[string]any{"id": "x1"}, "code", "AB-xx"), "code", "@pattern"},
		{"bio empty", with(base, "core", map[string]any{"id": "x1"}, "bio", ""), "bio", "@notEmpty"},
		{"bio missing at creation", with(base, "core", map[string]any{"id": "x1"}, "-", "bio"), "bio", "@notEmpty"},
		{"tags empty", with(base, "core", map[string]any{"id": "x1"}, "tags", []any{}), "tags", "@notEmpty"},
		{"a tag too long", with(base, "core", map[string]any{"id": "x1"}, "tags", []any{"go", "toolong"}), "tags", "@length(min: 0, max: 5)"},
		{"contact not an address", with(base, "core", map[string]any{"id": "x1"}, "contact", "nobody"), "contact", "@email"},
		{"born tomorrow", with(base, "core", map[string]any{"id": "x1"}, "born", tomorrow), "born", "@past"},
		{"renewal yesterday", with(base, "core", map[string]any{"id": "x1"}, "renewal", yesterday), "renewal", "@future"},
		{"kind changed", map[string]any{"core": map[string]any{"id": "m1"}, "kind": "silver"}, "kind", "@immutable"},
		{"bio cleared", map[string]any{"core": map[string]any{"id": "m1"}, "bio": nil}, "bio", "@notEmpty"},
	} {
		vals := map[string]any{"Member": []any{base, tc.bad}}
		want := "Member." + tc.field + " " + tc.rule
		_, msg, code := c.fail(upsertDoc, map[string]any{"v": vals})
		if code != "BAD_REQUEST" || !strings.Contains(msg, want) {
			t.Errorf("%s through GraphQL: %s %q; want BAD_REQUEST naming %q", tc.name, code, msg, want)
		}
		status, body := env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": vals})
		if msg, code := servertest.FirstError(body); status != 400 || code != "BAD_REQUEST" || !strings.Contains(msg, want) {
			t.Errorf("%s through REST: %d %s; want 400 naming %q", tc.name, status, dump(body), want)
		}
	}
	// A nested record is checked as a top-level one; its parent is not
	// written either.
	nested := map[string]any{"Roster": map[string]any{"core": map[string]any{"id": "r1"}, "lead": with(base, "handle", "ab")}}
	if _, msg, code := c.fail(upsertDoc, map[string]any{"v": nested}); code != "BAD_REQUEST" || !strings.Contains(msg, "Roster[0].lead.handle: Member.handle @length(min: 3, max: 12)") {
		t.Errorf("a nested Member breaking @length through GraphQL: %s %q", code, msg)
	}
	if status, body := env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": nested}); status != 400 {
		t.Errorf("a nested Member breaking @length through REST: %d %s", status, dump(body))
	}
	if n := path(c.data(`{ find(type: Roster, arcql: "*") { edges { cursor } } }`, nil), "find", "edges"); len(n.([]any)) != 0 {
		t.Errorf("a refused nested write left a Roster: %s", dump(n))
	}
	got := c.data(`{ find(type: Member, arcql: "*") { edges { node { ... on Member { core { id } kind bio } } } } }`, nil)
	edges, _ := path(got, "find", "edges").([]any)
	if len(edges) != 2 || path(edges[0], "node", "kind") != "gold" || path(edges[0], "node", "bio") != "hello" {
		t.Errorf("after the refused batches: %s; want m1 and m2 unchanged, nothing else", dump(got))
	}

	// Writing an @immutable field's own value again, and the other fields,
	// is not a change.
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Member": map[string]any{"core": map[string]any{"id": "m1"}, "kind": "gold", "bio": "hi"}}})
	// An @immutable reference: set at creation, link to another refused.
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Member": with(validMember("m3", "dave"), "team", map[string]any{"core": map[string]any{"id": "t1"}, "name": "red"}),
		"Team": map[string]any{"core": map[string]any{"id": "t2"}, "name": "blue"}}})
	_, msg, code := c.fail(`mutation { link(from: Member, to: Team, via: "team", whereFromID: "m3", andToID: "t2") }`, nil)
	if code != "BAD_REQUEST" || !strings.Contains(msg, "Member.team @immutable") {
		t.Errorf("link of an @immutable reference: %s %q", code, msg)
	}
	if n := path(c.data(`{ find(type: Member, arcql: "team.name = 'red'") { edges { cursor } } }`, nil), "find", "edges"); len(n.([]any)) != 1 {
		t.Errorf("m3's team changed: %s", dump(n))
	}
}

// TestHypiSecret: a @secret field is written as a String, kept as a hash,
// never returned by GraphQL or REST, and found by ArcQL equality beside
// an equality on core.id or a @unique field (on both stores); any other
// comparison of it is refused.
func TestHypiSecret(t *testing.T) {
	t.Parallel()
	c := newApp(t, "club", "club.test", rulesSDL)
	env := c.env
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Member": []any{validMember("m1", "alice"), with(validMember("m2", "bob"), "pin", "9876")}}})

	if _, msg, _ := c.fail(`{ get(type: Member, id: "m1") { ... on Member { pin } } }`, nil); !strings.Contains(msg, "pin") {
		t.Errorf("selecting pin: %q; want a validation error naming pin", msg)
	}
	_, body := env.Do(http.MethodGet, "/rest/v1/Member/m1", h, nil)
	if s := dump(body); strings.Contains(s, "1234") || strings.Contains(s, "argon2") || strings.Contains(s, `"pin"`) {
		t.Errorf("REST GET of m1 shows the secret: %s", s)
	}

	for _, tc := range []struct {
		arcql string
		want  []string
	}{
		{"handle = 'alice' AND pin = '1234'", []string{"m1"}},
		{"pin = '1234' AND core.id = 'm1'", []string{"m1"}},
		{"handle = 'alice' AND pin = '9876'", nil},
		{"handle = 'bob' AND pin = '9876' AND bio = 'hello'", []string{"m2"}},
		{"handle = 'bob' AND pin = '9876' AND bio = 'other'", nil},
		{"handle = 'nobody' AND pin = '1234'", nil},
	} {
		got := c.data(`query($q: String!) { find(type: Member, arcql: $q) { edges { node { ... on Member { core { id } } } } } }`, map[string]any{"q": tc.arcql})
		var ids []string
		for _, e := range path(got, "find", "edges").([]any) {
			ids = append(ids, path(e, "node", "core", "id").(string))
		}
		if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
			t.Errorf("find %q through GraphQL: %v, want %v", tc.arcql, ids, tc.want)
		}
		status, body := env.Do(http.MethodGet, "/rest/v1/Member?arcql="+url.QueryEscape(tc.arcql), h, nil)
		edges, _ := path(body, "data", "find", "edges").([]any)
		if status != 200 || len(edges) != len(tc.want) {
			t.Errorf("find %q through REST: %d %s, want %d records", tc.arcql, status, dump(body), len(tc.want))
		}
	}
	for _, bad := range []string{"pin = '1234'", "pin != '1234' AND core.id = 'm1'", "core.id = 'm1' AND (pin = '1234' OR bio = 'x')",
		"core.id = 'm1' AND NOT pin = '1234'", "handle = 'alice' AND pin ^ '12'", "core.id = 'm1' AND pin = 1234"} {
		_, msg, code := c.fail(`query($q: String!) { find(type: Member, arcql: $q) { edges { cursor } } }`, map[string]any{"q": bad})
		if code != "BAD_FILTER" || !strings.Contains(msg, "Member.pin is @secret") {
			t.Errorf("find %q: %s %q; want BAD_FILTER naming Member.pin as @secret", bad, code, msg)
		}
	}
	if _, msg, _ := c.fail(`{ find(type: Member, arcql: "* SORT pin") { edges { cursor } } }`, nil); !strings.Contains(msg, "pin") {
		t.Errorf("sorting by pin: %q", msg)
	}
}

// TestHypiDirectiveAddedToRelease: a release that adds validation
// directives existing records break is accepted; those records are kept
// and read as they are, a write that does not touch the field succeeds,
// and new writes follow the new rules.
func TestHypiDirectiveAddedToRelease(t *testing.T) {
	t.Parallel()
	c := newApp(t, "notes", "notes.test", "type Note {\n  core: Core\n  title: String\n  body: String\n}")
	env := c.env
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Note": map[string]any{"core": map[string]any{"id": "n1"}, "body": "x"}}})
	env.PutRelease("notes", "v2", "type Note {\n  core: Core\n  title: String @notNull\n  body: String @length(min: 3)\n}")
	if status, body := env.Do("PATCH", "/admin/v1/instances/notes.test", env.AdminHeaders(), map[string]any{"release": "v2"}); status != 200 {
		t.Fatalf("PATCH release: %d %s", status, dump(body))
	}
	get := `{ get(type: Note, id: "n1") { ... on Note { title body } } }`
	if got := c.data(get, nil); path(got, "get", "body") != "x" || path(got, "get", "title") != nil {
		t.Errorf("the old record after the release: %s", dump(got))
	}
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Note": map[string]any{"core": map[string]any{"id": "n1"}, "title": "kept"}}})
	if _, msg, _ := c.fail(upsertDoc, map[string]any{"v": map[string]any{"Note": map[string]any{"core": map[string]any{"id": "n1"}, "body": "y"}}}); !strings.Contains(msg, "Note.body @length(min: 3)") {
		t.Errorf("a short body under v2: %q", msg)
	}
	if _, msg, _ := c.fail(upsertDoc, map[string]any{"v": map[string]any{"Note": map[string]any{"body": "long enough"}}}); !strings.Contains(msg, "Note.title @notNull") {
		t.Errorf("a new note without a title under v2: %q", msg)
	}
}

// TestHypiImmutableRace: writers that all create one record at once, each
// with its own value of an @immutable field, through GraphQL and REST:
// one creates it, every other is refused naming the field, and the record
// holds the creator's value (the store checks the field in the write
// itself, not only in the read before it).
func TestHypiImmutableRace(t *testing.T) {
	t.Parallel()
	c := newApp(t, "club", "club.test", rulesSDL)
	h := map[string]string{tenant.Header: c.domain, "authorization": c.token}
	const writers = 8
	type answer struct {
		status int
		body   map[string]any
	}
	answers := make([]answer, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := with(validMember("race", "racer"), "kind", fmt.Sprintf("k%d", i))
			if i%2 == 0 {
				answers[i].status, answers[i].body = c.env.GraphQL(c.domain, c.token, upsertDoc, map[string]any{"v": map[string]any{"Member": m}})
			} else {
				answers[i].status, answers[i].body = c.env.Do(http.MethodPost, "/rest/v1/", h, map[string]any{"values": map[string]any{"Member": m}})
			}
		}()
	}
	wg.Wait()
	var won []int
	for i, a := range answers {
		msg, code := servertest.FirstError(a.body)
		switch {
		case a.status == 200 && a.body["errors"] == nil:
			won = append(won, i)
		case code != "BAD_REQUEST" || !strings.Contains(msg, "Member.kind") || !strings.Contains(msg, "immutable") && !strings.Contains(msg, "cannot change"):
			t.Errorf("writer %d: %d %s; want success or BAD_REQUEST naming Member.kind", i, a.status, dump(a.body))
		}
	}
	if len(won) != 1 {
		t.Fatalf("writers %v all wrote their kind, want one", won)
	}
	got := c.data(`{ get(type: Member, id: "race") { ... on Member { kind } } }`, nil)
	if k := path(got, "get", "kind"); k != fmt.Sprintf("k%d", won[0]) {
		t.Errorf("kind %v, want the creator's k%d", k, won[0])
	}
}
