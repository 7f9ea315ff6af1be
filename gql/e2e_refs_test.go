package gql_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/tenant"
)

// teamsSDL is a task board: a Team of accounts, Tasks assigned to an
// account and kept on a team.
const teamsSDL = `
type Team { name: String colleagues: [Account!] }
type Task { title: String assignee: Account team: Team }
`

// newTeams starts a server with the task board deployed on teams.test and
// the accounts alice, bob and carol; it returns the instance token's
// client, the three sessions and bob's id.
func newTeams(t *testing.T) (admin, alice, bob, carol *client, bobID string) {
	t.Helper()
	admin = newBookstore(t)
	admin.env.PutRelease("teams", "v1", teamsSDL)
	admin.token = admin.env.CreateInstance("teams.test", "teams", "v1", tenant.Settings{})
	admin.domain = "teams.test"
	admin.newAccount("alice", "alice@example.com", "correct horse battery")
	bobID = admin.newAccount("bob", "bob@example.com", "correct horse battery")
	admin.newAccount("carol", "carol@example.com", "correct horse battery")
	return admin, admin.login("alice", "correct horse battery"), admin.login("bob", "correct horse battery"),
		admin.login("carol", "correct horse battery"), bobID
}

func ref(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}} }

func TestReferencesToRecordsOneCannotRead(t *testing.T) {
	t.Parallel()
	admin, alice, _, carol, bobID := newTeams(t)
	upsert := func(c *client, typ string, v map[string]any) string {
		t.Helper()
		return path(c.data(grantDoc, map[string]any{"v": map[string]any{typ: v}}), "upsert", 0, "id").(string)
	}
	colleagues := `query($id: String!) { get(type: Team, id: $id) { ... on Team { colleagues { core { id } } } } }`

	// An upsert naming bob, whom alice cannot read, stores the reference.
	team := upsert(alice, "Team", map[string]any{"name": "alpha", "colleagues": []any{ref(bobID)}})
	// Stored, as the instance token reads it; alice reads through the
	// reference only what she may read (bob's account: nothing).
	if got := admin.data(colleagues, map[string]any{"id": team}); path(got, "get", "colleagues", 0, "core", "id") != bobID {
		t.Fatalf("alice's team after upserting bob, as the instance token reads it: %s", dump(got))
	}
	if got := alice.data(colleagues, map[string]any{"id": team}); len(path(got, "get", "colleagues").([]any)) != 0 {
		t.Errorf("alice reads bob's account through her team: %s", dump(got))
	}
	// link does the same.
	other := upsert(alice, "Team", map[string]any{"name": "beta"})
	link := `mutation($t: String!, $a: String!) { link(from: Team, via: "colleagues", to: Account, whereFromID: $t, andToID: $a) }`
	alice.data(link, map[string]any{"t": other, "a": bobID})
	if got := admin.data(colleagues, map[string]any{"id": other}); path(got, "get", "colleagues", 0, "core", "id") != bobID {
		t.Errorf("alice's second team after linking bob, as the instance token reads it: %s", dump(got))
	}
	// An id that does not exist is refused as before, by link and upsert alike.
	if _, msg, code := alice.fail(link, map[string]any{"t": other, "a": "no-such-account"}); code != "NOT_FOUND" || msg != "Account no-such-account does not exist" {
		t.Errorf("alice links an account that does not exist: %s %q", code, msg)
	}
	if _, msg, code := alice.fail(grantDoc, map[string]any{"v": map[string]any{"Team": map[string]any{"name": "x", "colleagues": []any{ref("no-such-account")}}}}); code != "NOT_FOUND" || !strings.Contains(msg, "Account no-such-account does not exist") {
		t.Errorf("alice upserts a team holding an account that does not exist: %s %q", code, msg)
	}

	// A Team the instance token made: referenced, not read, not changed.
	adminTeam := upsert(admin, "Team", map[string]any{"name": "team-alpha"})
	task := upsert(alice, "Task", map[string]any{"title": "ship", "team": ref(adminTeam), "assignee": ref(bobID)})
	read := `query($id: String!) { get(type: Task, id: $id) { ... on Task { title team { name } assignee { username } } } }`
	got := alice.data(read, map[string]any{"id": task})
	if path(got, "get", "title") != "ship" || path(got, "get", "team") != nil || path(got, "get", "assignee") != nil {
		t.Errorf("alice's task through references she cannot read (want team and assignee null): %s", dump(got))
	}
	if _, _, code := alice.fail(grantDoc, map[string]any{"v": map[string]any{"Task": map[string]any{"title": "x",
		"team": map[string]any{"core": map[string]any{"id": adminTeam}, "name": "mine"}}}}); code != "FORBIDDEN" {
		t.Errorf("alice changes the instance's team through a nested reference: %q, want FORBIDDEN", code)
	}
	if got := path(admin.data(`query($id: String!) { get(type: Team, id: $id) { ... on Team { name } } }`, map[string]any{"id": adminTeam}), "get", "name"); got != "team-alpha" {
		t.Errorf("the instance's team after alice's refused change: %v", got)
	}
	// carol can read none of it.
	if got := path(carol.data(read, map[string]any{"id": task}), "get"); got != nil {
		t.Errorf("carol reads alice's task: %v", got)
	}
}

func TestAccountFields(t *testing.T) {
	t.Parallel()
	admin, alice, _, carol, bobID := newTeams(t)
	task := path(alice.data(grantDoc, map[string]any{"v": map[string]any{"Task": map[string]any{"title": "ship", "assignee": ref(bobID)}}}), "upsert", 0, "id").(string)
	assignee := `query($id: String!) { get(type: Task, id: $id) { ... on Task { assignee { username emails { value } } } } }`
	getBob := `query($id: String!) { get(type: Account, id: $id) { ... on Account { username emails { value } verified } } }`
	findAccounts := `query($q: String!) { find(type: Account, arcql: $q) { edges { node { ... on Account { username } } } } }`
	usernames := func(c *client, q string) []string {
		t.Helper()
		out := []string{}
		for _, e := range path(c.data(findAccounts, map[string]any{"q": q}), "find", "edges").([]any) {
			name, _ := path(e, "node", "username").(string) // the instance's admin account has none
			out = append(out, name)
		}
		return out
	}

	// Without the setting: null.
	if got := path(alice.data(assignee, map[string]any{"id": task}), "get", "assignee"); got != nil {
		t.Fatalf("alice reads her task's assignee without accountFields: %v", got)
	}
	if got := usernames(carol, "*"); len(got) != 1 || got[0] != "carol" {
		t.Errorf("carol finds the accounts without accountFields: %v, want only herself", got)
	}

	// Fields that can never be listed, or are not Account fields.
	for _, bad := range []struct {
		fields []any
		name   string
	}{
		{[]any{"password"}, "password"}, {[]any{"emails"}, "emails"}, {[]any{"username", "phones"}, "phones"},
		{[]any{"sessionToken"}, "sessionToken"}, {[]any{"nickname"}, "nickname"}, {[]any{"username", "username"}, "username"},
	} {
		status, body := admin.env.Admin(http.MethodPatch, "/instances/teams.test", map[string]any{"accountFields": bad.fields})
		if msg := dump(body); status != 400 || !strings.Contains(msg, bad.name) || !strings.Contains(msg, "accountFields") {
			t.Errorf("accountFields %v: %d %s, want 400 naming %s", bad.fields, status, msg, bad.name)
		}
	}
	if got := path(alice.data(assignee, map[string]any{"id": task}), "get", "assignee"); got != nil {
		t.Fatalf("a refused accountFields changed what alice reads: %v", got)
	}

	status, body := admin.env.Admin(http.MethodPatch, "/instances/teams.test", map[string]any{"accountFields": []any{"username"}})
	if status != 200 {
		t.Fatalf("accountFields [username]: %d %s", status, dump(body))
	}
	if _, body := admin.env.Admin(http.MethodGet, "/instances/teams.test", nil); !strings.Contains(dump(body), `"accountFields": [`) {
		t.Errorf("the instance's settings do not show accountFields: %s", dump(body))
	}
	got := alice.data(assignee, map[string]any{"id": task})
	if path(got, "get", "assignee", "username") != "bob" || path(got, "get", "assignee", "emails") != nil {
		t.Errorf("alice's task's assignee with accountFields [username] (want bob, no e-mails): %s", dump(got))
	}
	// Every door: get, find, REST, aggregations.
	got = carol.data(getBob, map[string]any{"id": bobID})
	if path(got, "get", "username") != "bob" || path(got, "get", "emails") != nil || path(got, "get", "verified") != nil {
		t.Errorf("carol gets bob (want his username only): %s", dump(got))
	}
	if got := strings.Join(usernames(carol, "*"), ","); !strings.Contains(got, "alice,bob,carol") {
		t.Errorf("carol finds the accounts with accountFields [username]: %v", got)
	}
	h := map[string]string{tenant.Header: "teams.test", "authorization": carol.token}
	if status, body := admin.env.Do(http.MethodGet, "/rest/v1/Account/"+bobID, h, nil); status != 200 || !strings.Contains(dump(body), `"bob"`) || strings.Contains(dump(body), "bob@example.com") {
		t.Errorf("carol's REST GET of bob: %d %s", status, dump(body))
	}
	// A filter or sort on a field not listed does not probe it.
	for q, want := range map[string]string{
		`username = "bob"`:               "bob",
		`emails = "bob@example.com"`:     "",
		`emails = "carol@example.com"`:   "carol",
		`NOT emails = "bob@example.com"`: "carol",
	} {
		if got := strings.Join(usernames(carol, q), ","); got != want {
			t.Errorf("carol finds accounts where %s: %q, want %q", q, got, want)
		}
	}
	if got := path(carol.data(`{ aggregate { account(where: "emails = 'bob@example.com'") { core { count } } } }`, nil), "aggregate", "account", "core", "count"); got != float64(0) {
		t.Errorf("carol counts accounts by bob's e-mail: %v, want 0", got)
	}
	if got := path(carol.data(`{ aggregate { account(where: "username = 'bob'") { core { count } } } }`, nil), "aggregate", "account", "core", "count"); got != float64(1) {
		t.Errorf("carol counts accounts named bob: %v, want 1", got)
	}
	// Subscriptions: bob's change reaches carol with his username only; a
	// filter on e-mails selects only her own account's events (the event
	// of bob's that matches it is left out: hers, after it, comes first).
	carolID := path(carol.data(`{ find(type: Account, arcql: "username = 'carol'") { edges { node { ... on Account { core { id } } } } } }`, nil),
		"find", "edges", 0, "node", "core", "id").(string)
	all := carol.sse(`subscription { subscribe(type: Account) { op id node { ... on Account { username emails { value } } } } }`, nil, nil)
	byEmail := carol.sse(`subscription { subscribe(type: Account, arcql: "emails = 'bob@example.com' OR emails = 'carol@example.com'") { op id } }`, nil, nil)
	admin.data(grantDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": bobID}, "username": "bobby"}}})
	admin.data(grantDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": carolID}, "username": "caroline"}}})
	if got, _ := all.change(); got.ID != bobID || got.Node["username"] != "bobby" || got.Node["emails"] != nil {
		t.Errorf("carol's event of bob's change: %+v, want his new username and no e-mails", got)
	}
	if got, _ := byEmail.change(); got.ID != carolID {
		t.Errorf("carol's first event where emails = bob's or hers: %+v, want her own (%s), not bob's", got, carolID)
	}
	// Reading is not changing.
	if _, _, code := carol.fail(grantDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": bobID}, "username": "robert"}}}); code != "FORBIDDEN" && code != "NOT_FOUND" {
		t.Errorf("carol renames bob: %q, want FORBIDDEN", code)
	}

	// Cleared, the fields are private again.
	if status, body := admin.env.Admin(http.MethodPatch, "/instances/teams.test", map[string]any{"accountFields": []any{}}); status != 200 {
		t.Fatalf("clearing accountFields: %d %s", status, dump(body))
	}
	if got := path(alice.data(assignee, map[string]any{"id": task}), "get", "assignee"); got != nil {
		t.Errorf("alice reads the assignee after accountFields was cleared: %v", got)
	}
}
