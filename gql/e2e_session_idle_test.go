package gql_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/tenant"
)

// TestSessionIdleExpiry: where an instance sets sessionIdleTimeout, a
// session unused for that long answers 401, through GraphQL and REST;
// each use moves the deadline, and the use is written to the account at
// most once per step (a minute here), not once per request. Where the
// setting is absent, sessions end only at their lifetime. The clock is
// the accounts' clock, moved by Shift: no test waits.
//
// hostile checklist 14: absolute and idle expiry → 401.
func TestSessionIdleExpiry(t *testing.T) {
	t.Parallel()
	plain := newBookstore(t)
	env := plain.env
	plain.newAccount("ada", "", "correct horse battery")
	idle := &client{t: t, env: env, domain: "idle.test"}
	idle.token = env.CreateInstance(idle.domain, "bookstore", "v1", tenant.Settings{SessionIdleTimeout: 600})
	adaID := idle.newAccount("ada", "", "correct horse battery")
	inst, ok := env.Directory.Lookup(idle.domain)
	if !ok {
		t.Fatal("the idle.test instance is not in the directory")
	}
	account := func() (updated time.Time, used map[string]any) {
		t.Helper()
		rec, err := env.Store.Get(context.Background(), inst.ID, "Account", adaID)
		if err != nil {
			t.Fatalf("reading ada's account: %v", err)
		}
		used, _ = rec.Fields[auth.FieldSessionsUsed].(map[string]any)
		return rec.Updated, used
	}
	get := `{ get(type: Book, id: "nothing") { __typename } }`
	status := func(c *client) int {
		t.Helper()
		s, _ := c.do(get, nil)
		return s
	}
	rest := func(c *client) int {
		t.Helper()
		s, _ := env.Do(http.MethodGet, "/rest/v1/Book", map[string]string{tenant.Header: c.domain, "authorization": c.token}, nil)
		return s
	}

	plainAda := plain.login("ada", "correct horse battery")
	ada := idle.login("ada", "correct horse battery")
	claims, err := env.Accounts.Sessions.Parse(inst.ID, ada.token, env.Accounts.Now())
	if err != nil {
		t.Fatalf("parsing ada's session token: %v", err)
	}
	before, _ := account()
	if s := status(ada); s != 200 {
		t.Fatalf("a fresh session: %d, want 200", s)
	}
	if updated, used := account(); !updated.Equal(before) || used != nil {
		t.Errorf("a use within the first step wrote the account: updated %v → %v, sessionsUsed %v", before, updated, used)
	}

	// Used after 5 minutes: the use is recorded once, not per request.
	env.Accounts.Shift(5 * time.Minute)
	if s := status(ada); s != 200 {
		t.Fatalf("after 5 idle minutes of 10: %d, want 200", s)
	}
	recorded, used := account()
	if used[claims.Session] == nil {
		t.Fatalf("the use after 5 minutes is not recorded: sessionsUsed = %v", used)
	}
	if s := rest(ada); s != 200 {
		t.Fatalf("GET /rest/v1/Book after the recorded use: %d, want 200", s)
	}
	if updated, _ := account(); !updated.Equal(recorded) {
		t.Errorf("a second use within a step wrote the account again: updated %v → %v", recorded, updated)
	}

	// 14 minutes after the login but 9 after the last use: still live.
	env.Accounts.Shift(9 * time.Minute)
	if s := status(ada); s != 200 {
		t.Fatalf("9 minutes after the last use (14 after the login): %d, want 200", s)
	}
	// 10 minutes without use: refused on every door, with the answer of
	// any expired session.
	env.Accounts.Shift(10*time.Minute + time.Second)
	if s := status(ada); s != 401 {
		t.Errorf("after 10 idle minutes: GraphQL %d, want 401", s)
	}
	if s := rest(ada); s != 401 {
		t.Errorf("after 10 idle minutes: REST %d, want 401", s)
	}
	// Its end is not a lockout: a new login works; and the instance
	// without the setting keeps its session (24 minutes unused).
	if s := status(idle.login("ada", "correct horse battery")); s != 200 {
		t.Errorf("a new session after the idle one ended: %d, want 200", s)
	}
	if s := status(plainAda); s != 200 {
		t.Errorf("a session unused for 24 minutes where no idle timeout is set: %d, want 200", s)
	}

	// The setting is checked.
	if s, body := env.Admin(http.MethodPatch, "/instances/"+idle.domain, map[string]any{"sessionIdleTimeout": -1}); s != 400 {
		t.Errorf("sessionIdleTimeout -1: %d %s, want 400", s, dump(body))
	}
}
