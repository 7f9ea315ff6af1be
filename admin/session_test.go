package admin_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/keyring"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestAdminSession: POST /instances/{domain}/session answers, to the admin
// token only, a token that reads and writes the instance's data as its
// instance token does, and that is refused on another instance, after 15
// minutes and once the key that signed it is retired.
func TestAdminSession(t *testing.T) {
	t.Parallel()
	r1 := keyring.Generate()
	file := filepath.Join(t.TempDir(), "core.keys")
	if err := keyring.CreateFile(file, r1); err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	env := servertest.Start(t, servertest.WithKeys(keys))
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	instToken := env.CreateInstance("a.test", "bookstore", "v1", tenant.Settings{})
	env.CreateInstance("b.test", "bookstore", "v1", tenant.Settings{})
	if status, body := env.GraphQL("a.test", instToken, `mutation { upsert(values: {Book: [{title: "Dune", core: {id: "dune"}}]}) { id } }`, nil); status != 200 {
		t.Fatalf("upsert with the instance token: %d %s", status, dump(body))
	}

	session := func() (string, time.Time) {
		t.Helper()
		status, body := env.Admin(http.MethodPost, "/instances/a.test/session", nil)
		token, _ := body["token"].(string)
		expires, _ := time.Parse(time.RFC3339Nano, body["expires"].(string))
		if status != 201 || body["domain"] != "a.test" || !strings.HasPrefix(token, "cs2.") {
			t.Fatalf("session answered %d %s", status, dump(body))
		}
		return token, expires
	}
	token, expires := session()
	if d := time.Until(expires); d < 14*time.Minute || d > 15*time.Minute+time.Second {
		t.Errorf("the session expires in %s, want 15 minutes", d)
	}
	read := `{ get(type: Book, id: "dune") { ... on Book { title core { createdBy } } } }`
	status, body := env.GraphQL("a.test", "Bearer "+token, read, nil)
	if status != 200 || dump(body["data"]) == "null" || !strings.Contains(dump(body), `"Dune"`) {
		t.Fatalf("reading with the admin session: %d %s", status, dump(body))
	}
	if status, body := env.GraphQL("a.test", token, `mutation { upsert(values: {Book: [{title: "Emma"}]}) { id } }`, nil); status != 200 || body["errors"] != nil {
		t.Errorf("writing with the admin session: %d %s", status, dump(body))
	}

	refused := func(name, domain, token string) {
		t.Helper()
		status, body := env.GraphQL(domain, token, read, nil)
		if _, code := servertest.FirstError(body); status != 401 || code != "UNAUTHENTICATED" {
			t.Errorf("%s: %d %s, want 401 UNAUTHENTICATED", name, status, dump(body))
		}
	}
	refused("on another instance", "b.test", token)

	// Only the admin token gets one, and only for an instance that exists.
	for name, h := range map[string]map[string]string{
		"no token":           nil,
		"the instance token": {"authorization": instToken},
		"an admin session":   {"authorization": token},
	} {
		if status, body := env.Do(http.MethodPost, "/admin/v1/instances/a.test/session", h, nil); status != 401 || body["token"] != nil {
			t.Errorf("a session asked with %s: %d %s, want 401", name, status, dump(body))
		}
	}
	if status, _ := env.Admin(http.MethodPost, "/instances/nope.test/session", nil); status != 404 {
		t.Errorf("a session of an unknown instance: %d, want 404", status)
	}
	if status, _ := env.Admin(http.MethodGet, "/instances/a.test/session", nil); status != 405 {
		t.Errorf("GET of the session route: %d, want 405", status)
	}

	// After 15 minutes it is refused; a new one works.
	env.Accounts.Shift(15*time.Minute + time.Second)
	refused("after 15 minutes", "a.test", token)
	token, _ = session()
	if status, body := env.GraphQL("a.test", token, read, nil); status != 200 || body["errors"] != nil {
		t.Fatalf("a new session after the first ended: %d %s", status, dump(body))
	}

	// Retiring the key that signed it ends it.
	r2, _, _ := r1.Rotate()
	if err := keyring.WriteFile(file, r2); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	if status, body := env.GraphQL("a.test", token, read, nil); status != 200 || body["errors"] != nil {
		t.Fatalf("after the ring is rotated: %d %s", status, dump(body))
	}
	r3, _ := r2.Retire(r1.Active())
	if err := keyring.WriteFile(file, r3); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	refused("once its key is retired", "a.test", token)

	// Rotating the instance token ends the admin sessions issued before.
	token, _ = session()
	if status, body := env.Admin(http.MethodPost, "/instances/a.test/token", nil); status != 200 || body["token"] == nil {
		t.Fatalf("rotating a.test's token: %d %s", status, dump(body))
	}
	refused("once the instance token is rotated", "a.test", token)
	token, _ = session()
	if status, body := env.GraphQL("a.test", token, read, nil); status != 200 || body["errors"] != nil {
		t.Fatalf("a new session after the rotation: %d %s", status, dump(body))
	}
}
