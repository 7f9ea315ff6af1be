package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// hostile checklist 7 through REST: a login body whose username, e-mail
// or password is an object ({"$ne": null}, {"$regex": ".*"}) or a list is
// 400 naming the field and its type, and logs nobody in. The accounts are
// named what graphql-go's String made of those values: before the check,
// such a login found them.
func TestLoginRefusesObjectsOverREST(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, tenant.Settings{})
	const pw = "correct horse battery"
	for _, name := range []string{"map[$ne:<nil>]", "map[$regex:.*]", "[a]", "ada"} {
		account := map[string]any{"username": name, "password": map[string]any{"value": pw}}
		if name == "ada" {
			account["emails"] = []any{"ada@example.com"}
		}
		status, body := c.do(http.MethodPost, "/fn/mutation/createAccount", map[string]any{"value": account})
		if status != http.StatusOK {
			t.Fatalf("createAccount %s: %d %s", name, status, dump(body))
		}
	}
	anon := &client{t: t, env: c.env, domain: c.domain}
	// The literal name logs in: the account is there to be found.
	if status, body := anon.do(http.MethodPost, "/login", map[string]any{"username": "map[$ne:<nil>]", "password": pw}); status != http.StatusOK ||
		!strings.Contains(dump(body), `"sessionToken": "`) {
		t.Fatalf("login by the literal name: %d %s", status, dump(body))
	}

	for _, tc := range []struct {
		name, path string
		body       map[string]any
		want       string
	}{
		{"$ne for the username", "/login", map[string]any{"username": map[string]any{"$ne": nil}, "password": pw},
			"variable $username: expected a String, got an object"},
		{"$regex for the username", "/login", map[string]any{"username": map[string]any{"$regex": ".*"}, "password": pw},
			"variable $username: expected a String, got an object"},
		{"a list for the username", "/login", map[string]any{"username": []any{"a"}, "password": pw},
			"variable $username: expected a String, got a list"},
		{"$ne for the password", "/login", map[string]any{"username": "ada", "password": map[string]any{"$ne": nil}},
			"variable $password: expected a String, got an object"},
		{"$ne for the e-mail", "/login", map[string]any{"email": map[string]any{"$ne": nil}, "password": pw},
			"variable $email: expected a String, got an object"},
		{"$ne through /fn/query/login", "/fn/query/login", map[string]any{"username": map[string]any{"$ne": nil}, "password": pw},
			"variable $username: expected a String, got an object"},
		{"$gt through /fn/query/loginByEmail", "/fn/query/loginByEmail", map[string]any{"email": map[string]any{"$gt": ""}, "password": pw},
			"variable $email: expected a String, got an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := anon.do(http.MethodPost, tc.path, tc.body)
			msg, code := servertest.FirstError(body)
			if status != http.StatusBadRequest || code != "BAD_REQUEST" || msg != tc.want {
				t.Errorf("%d %s, want 400 BAD_REQUEST %q", status, dump(body), tc.want)
			}
			if strings.Contains(dump(body), "sessionToken") {
				t.Errorf("the refused login answered a login: %s", dump(body))
			}
		})
	}
}

// hostile checklist 27 through REST: Extended-JSON-looking objects for a
// String or DateTime field of a POST or PUT body are 400 naming the
// field; nothing is stored. A Json field keeps a plain object.
func TestUpsertRefusesObjectsOverREST(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, tenant.Settings{})
	for _, tc := range []struct {
		name, method string
		book         map[string]any
		want         string
	}{
		{"$oid for a String", http.MethodPost, map[string]any{"title": map[string]any{"$oid": "507f1f77bcf86cd799439011"}},
			"variable $values.Book[0].title: expected a String, got an object"},
		{"$code for a String", http.MethodPut, map[string]any{"title": map[string]any{"$code": "function () { return 1 }"}},
			"variable $values.Book[0].title: expected a String, got an object"},
		{"_bsontype for a String", http.MethodPost, map[string]any{"title": map[string]any{"_bsontype": "Code", "code": "x"}},
			"variable $values.Book[0].title: expected a String, got an object"},
		{"$date for a DateTime", http.MethodPut, map[string]any{"published": map[string]any{"$date": "2026-01-02T15:04:05Z"}},
			"variable $values.Book[0].published: expected a DateTime (an ISO-8601 timestamp string), got an object"},
		{"$oid in a list of Strings", http.MethodPost, map[string]any{"tags": []any{map[string]any{"$oid": "x"}}},
			"variable $values.Book[0].tags[0]: expected a String, got an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.book["core"] = map[string]any{"id": "b1"}
			status, body := c.do(tc.method, "/", map[string]any{"values": map[string]any{"Book": []any{tc.book}}})
			if msg, code := servertest.FirstError(body); status != http.StatusBadRequest || code != "BAD_REQUEST" || msg != tc.want {
				t.Errorf("%d %s, want 400 BAD_REQUEST %q", status, dump(body), tc.want)
			}
		})
	}
	if status, body := c.do(http.MethodGet, "/Book/b1", nil); status != http.StatusNotFound {
		t.Errorf("a refused upsert stored b1: %d %s", status, dump(body))
	}
	if status, body := c.do(http.MethodPost, "/", map[string]any{"values": map[string]any{"Book": map[string]any{
		"core": map[string]any{"id": "b2"}, "title": "Dune", "meta": map[string]any{"ref": map[string]any{"id": "x1"}}}}}); status != http.StatusOK {
		t.Fatalf("a Json object: %d %s", status, dump(body))
	}
	if status, body := c.do(http.MethodGet, "/Book/b2", nil); status != http.StatusOK || !strings.Contains(dump(body), `"ref": {`) {
		t.Errorf("the stored Json object: %d %s", status, dump(body))
	}
}
