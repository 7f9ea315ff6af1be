package gql_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

const (
	createAccountDoc  = `mutation($v: AccountInput!) { createAccount(value: $v) { id createdBy } }`
	loginDoc          = `query($u: String!, $p: String!) { login(username: $u, password: $p) { core sessionToken sessionExpires errorCode errorMsg } }`
	changePasswordDoc = `mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) }`
	loginByEmailDoc   = `query($e: String!, $p: String!) { loginByEmail(email: $e, password: $p) { core sessionToken sessionExpires errorCode errorMsg } }`
)

// newAccount creates an account with the instance token and returns its id.
func (c *client) newAccount(username, email, password string) string {
	c.t.Helper()
	v := map[string]any{"password": map[string]any{"value": password}}
	if username != "" {
		v["username"] = username
	}
	if email != "" {
		v["emails"] = []any{email}
	}
	d := c.data(createAccountDoc, map[string]any{"v": v})
	return path(d, "createAccount", "id").(string)
}

// adaAndBob makes the accounts ada and bob on c's instance (c holds the
// instance token) and logs each in: their sessions' clients, and their ids.
func (c *client) adaAndBob() (ada, bob *client, adaID, bobID string) {
	c.t.Helper()
	adaID = c.newAccount("ada", "", "correct horse battery")
	bobID = c.newAccount("bob", "", "correct horse battery")
	return c.login("ada", "correct horse battery"), c.login("bob", "correct horse battery"), adaID, bobID
}

// login logs in by username and returns a client acting with the session.
func (c *client) login(username, password string) *client {
	c.t.Helper()
	_, body := c.env.GraphQL(c.domain, "", loginDoc, map[string]any{"u": username, "p": password})
	token, _ := path(body, "data", "login", "sessionToken").(string)
	if token == "" {
		c.t.Fatalf("login %s failed: %s", username, dump(body))
	}
	return &client{t: c.t, env: c.env, domain: c.domain, token: token}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	id := c.newAccount("ada", "ada@example.com", "correct horse battery")
	before := time.Now().Unix()

	for _, tc := range []struct {
		name, doc, field string
		vars             map[string]any
	}{
		{"by username", loginDoc, "login", map[string]any{"u": "ada", "p": "correct horse battery"}},
		{"by e-mail", loginByEmailDoc, "loginByEmail", map[string]any{"e": "ada@example.com", "p": "correct horse battery"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := c.env.GraphQL(c.domain, "", tc.doc, tc.vars)
			got := path(body, "data", tc.field).(map[string]any)
			token, _ := got["sessionToken"].(string)
			expires, _ := got["sessionExpires"].(float64)
			if status != 200 || token == "" || got["core"] != nil || got["errorCode"] != nil || got["errorMsg"] != nil {
				t.Fatalf("%d %s", status, dump(body))
			}
			week := float64(before + 7*24*3600)
			if expires < week-5 || expires > week+5 {
				t.Errorf("sessionExpires = %.0f, want about %.0f (7 days, Unix seconds)", expires, week)
			}
			me := &client{t: t, env: c.env, domain: c.domain, token: token}
			acct := me.data(`query($id: String!) { get(type: Account, id: $id) { ... on Account { username emails { value } } } }`, map[string]any{"id": id})
			if diff := cmp.Diff(map[string]any{"username": "ada", "emails": []any{map[string]any{"value": "ada@example.com"}}}, acct["get"]); diff != "" {
				t.Errorf("own Account through the session (-want +got):\n%s", diff)
			}
		})
	}

	// Unknown user and wrong password: the same answer.
	_, unknown := c.env.GraphQL(c.domain, "", loginDoc, map[string]any{"u": "nobody", "p": "correct horse battery"})
	_, wrong := c.env.GraphQL(c.domain, "", loginDoc, map[string]any{"u": "ada", "p": "wrong horse battery"})
	want := map[string]any{"data": map[string]any{"login": map[string]any{"core": nil, "sessionToken": nil, "sessionExpires": nil,
		"errorCode": "INVALID_CREDENTIALS", "errorMsg": "invalid username or password"}}}
	if diff := cmp.Diff(want, unknown); diff != "" {
		t.Errorf("unknown user (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(unknown, wrong); diff != "" {
		t.Errorf("wrong password differs from unknown user (-unknown +wrong):\n%s", diff)
	}

	// The password is never returned, filtered or set by an unknown shape.
	if status, _, _ := c.fail(`{ find(type: Account, arcql: "*") { edges { node { ... on Account { password } } } } }`, nil); status != 400 {
		t.Errorf("selecting Account.password: status %d, want 400", status)
	}
	if _, _, code := c.fail(`{ find(type: Account, arcql: "password = 'x'") { edges { cursor } } }`, nil); code != "BAD_FILTER" {
		t.Errorf("filtering on Account.password: %s, want BAD_FILTER", code)
	}
	for _, pw := range []string{"short", strings.Repeat("x", 1025)} {
		if _, msg, code := c.fail(createAccountDoc, map[string]any{"v": map[string]any{"username": "bob" + pw[:1], "password": map[string]any{"value": pw}}}); code != "BAD_REQUEST" || !strings.Contains(msg, "password") {
			t.Errorf("password of %d bytes: %s %q", len(pw), code, msg)
		}
	}
	if _, msg, code := c.fail(loginDoc, map[string]any{"u": "ada", "p": strings.Repeat("x", 1025)}); code != "BAD_REQUEST" || !strings.Contains(msg, "1024") {
		t.Errorf("login with an oversized password: %s %q", code, msg)
	}
}

func TestCreateAccountPermissions(t *testing.T) {
	t.Parallel()
	env := newBookstore(t).env
	closed := &client{t: t, env: env, domain: "closed.test"}
	closed.token = env.CreateInstance("closed.test", "bookstore", "v1", tenant.Settings{})
	open := &client{t: t, env: env, domain: "open.test"}
	open.token = env.CreateInstance("open.test", "bookstore", "v1", tenant.Settings{AnonymousRegistration: true})
	v := map[string]any{"v": map[string]any{"username": "eve", "password": map[string]any{"value": "eve's password"}}}

	if status, body := env.GraphQL(closed.domain, "", createAccountDoc, v); status != 401 || path(body, "errors", 0, "extensions", "code") != "UNAUTHENTICATED" {
		t.Errorf("anonymous createAccount where registration is closed: %d %s", status, dump(body))
	}
	status, body := env.GraphQL(open.domain, "", createAccountDoc, v)
	id, _ := path(body, "data", "createAccount", "id").(string)
	if status != 200 || id == "" || path(body, "data", "createAccount", "createdBy") != id {
		t.Fatalf("anonymous createAccount where registration is open: %d %s (want createdBy = the account)", status, dump(body))
	}
	eve := open.login("eve", "eve's password")
	if _, _, code := eve.fail(createAccountDoc, map[string]any{"v": map[string]any{"username": "mallory", "password": map[string]any{"value": "mallory's password"}}}); code != "FORBIDDEN" {
		t.Errorf("a user creating an account: %s, want FORBIDDEN", code)
	}
	if _, _, code := open.fail(createAccountDoc, v); code != "CONFLICT" {
		t.Errorf("a second eve: %s, want CONFLICT", code)
	}
	// Where the instance lets users create accounts, they may; sessions
	// there last the instance's sessionLifetime.
	users := &client{t: t, env: env, domain: "users.test"}
	users.token = env.CreateInstance("users.test", "bookstore", "v1", tenant.Settings{UsersMayCreateAccounts: true, SessionLifetime: 3600})
	users.newAccount("eve", "", "eve's password")
	_, lb := env.GraphQL(users.domain, "", loginDoc, map[string]any{"u": "eve", "p": "eve's password"})
	if exp, _ := path(lb, "data", "login", "sessionExpires").(float64); exp < float64(time.Now().Unix()+3590) || exp > float64(time.Now().Unix()+3610) {
		t.Errorf("sessionExpires with a 1-hour lifetime: %s", dump(lb))
	}
	eve2 := &client{t: t, env: env, domain: users.domain, token: path(lb, "data", "login", "sessionToken").(string)}
	eve2.data(createAccountDoc, map[string]any{"v": map[string]any{"username": "frank", "password": map[string]any{"value": "frank's password"}}})

	// Anonymous callers cannot touch records, even where registration is open.
	if status, _ := env.GraphQL(open.domain, "", `{ find(type: Book, arcql: "*") { edges { cursor } } }`, nil); status != 401 {
		t.Errorf("anonymous find: %d, want 401", status)
	}
}

func TestSessionTokens(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.newAccount("ada", "", "correct horse battery")
	ada := c.login("ada", "correct horse battery")
	get := `{ get(type: Book, id: "nothing") { __typename } }`
	if status, body := ada.do(get, nil); status != 200 || body["errors"] != nil {
		t.Fatalf("a fresh session: %d %s", status, dump(body))
	}
	bearer := &client{t: t, env: c.env, domain: c.domain, token: "Bearer " + ada.token}
	if status, _ := bearer.do(get, nil); status != 200 {
		t.Errorf("Bearer session token: %d", status)
	}

	// Another instance of the same release does not accept it.
	c.env.CreateInstance("other.test", "bookstore", "v1", tenant.Settings{})
	if status, _ := c.env.GraphQL("other.test", ada.token, get, nil); status != 401 {
		t.Errorf("session token on another instance: %d, want 401", status)
	}
	// A forged or mangled token.
	for _, bad := range []string{ada.token + "x", ada.token[:len(ada.token)-4] + "AAAA", "cs1.eyJ9.AAAA", "cs1."} {
		if status, _ := c.env.GraphQL(c.domain, bad, get, nil); status != 401 {
			t.Errorf("token %q: %d, want 401", bad, status)
		}
	}

	// A password change keeps the session that made it and revokes the
	// others; it needs the current password (a session's upsert of its
	// password is refused).
	other := c.login("ada", "correct horse battery")
	id := path(ada.data(`{ find(type: Account, arcql: "*") { edges { cursor } } }`, nil), "find", "edges", 0, "cursor").(string)
	if _, msg, code := ada.fail(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": id}, "password": map[string]any{"value": "new horse battery"}}}}); code != "FORBIDDEN" || !strings.Contains(msg, "changePassword") {
		t.Errorf("a session's upsert of its password: %s %q, want FORBIDDEN naming changePassword", code, msg)
	}
	if _, msg, code := ada.fail(changePasswordDoc, map[string]any{"c": "wrong horse battery", "n": "new horse battery"}); code != "FORBIDDEN" || !strings.Contains(msg, "current password") {
		t.Errorf("changePassword with a wrong current password: %s %q, want FORBIDDEN", code, msg)
	}
	if status, _ := other.do(get, nil); status != 200 {
		t.Errorf("another session after a refused password change: %d, want 200", status)
	}
	ada.data(changePasswordDoc, map[string]any{"c": "correct horse battery", "n": "new horse battery"})
	if status, _ := ada.do(get, nil); status != 200 {
		t.Errorf("the session that changed the password: %d, want 200", status)
	}
	if status, _ := other.do(get, nil); status != 401 {
		t.Errorf("another session after the password change: %d, want 401", status)
	}
	if _, body := c.env.GraphQL(c.domain, "", loginDoc, map[string]any{"u": "ada", "p": "correct horse battery"}); path(body, "data", "login", "errorCode") != "INVALID_CREDENTIALS" {
		t.Errorf("the old password still logs in: %s", dump(body))
	}
	fresh := c.login("ada", "new horse battery")

	// Logout revokes every session issued until then.
	ada.data(`mutation { logout }`, nil)
	for _, s := range []*client{ada, fresh} {
		if status, _ := s.do(get, nil); status != 401 {
			t.Errorf("a session after logout: %d, want 401", status)
		}
	}

	// Sessions expire after 7 days.
	later := c.login("ada", "new horse battery")
	c.env.Accounts.Shift(7*24*time.Hour + time.Minute)
	if status, _ := later.do(get, nil); status != 401 {
		t.Errorf("a session after 7 days: %d, want 401", status)
	}

	// A disabled account cannot log in and its sessions stop.
	c.env.Accounts.Shift(-(7*24*time.Hour + time.Minute))
	live := c.login("ada", "new horse battery")
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": id}, "enabled": false}}})
	if status, _ := live.do(get, nil); status != 401 {
		t.Errorf("a session of a disabled account: %d, want 401", status)
	}
	if _, body := c.env.GraphQL(c.domain, "", loginDoc, map[string]any{"u": "ada", "p": "new horse battery"}); path(body, "data", "login", "errorCode") != "ACCOUNT_DISABLED" {
		t.Errorf("login of a disabled account: %s", dump(body))
	}
}

func TestOwnerRule(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	adaID := c.newAccount("ada", "", "ada's password")
	c.newAccount("bob", "", "bob's password")
	ada, bob := c.login("ada", "ada's password"), c.login("bob", "bob's password")
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "admins"}, "title": "by the instance token"}}})
	d := ada.data(upsertDoc, map[string]any{"v": map[string]any{"Book": []any{
		map[string]any{"core": map[string]any{"id": "ada1"}, "title": "ada one", "price": 1},
		map[string]any{"core": map[string]any{"id": "ada2"}, "title": "ada two", "price": 2},
	}}})
	if path(d, "upsert", 0, "createdBy") != adaID {
		t.Errorf("createdBy of ada's record = %v, want %s", path(d, "upsert", 0, "createdBy"), adaID)
	}
	bob.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "bob1"}, "title": "bob one", "price": 3}}})

	if diff := cmp.Diff([]string{"ada one", "ada two"}, ada.names("Book", "*")); diff != "" {
		t.Errorf("ada's find (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ada one", "ada two", "by the instance token", "bob one"}, c.names("Book", "*")); diff != "" {
		t.Errorf("the instance token's find (-want +got):\n%s", diff)
	}
	if g := ada.data(`{ get(type: Book, id: "bob1") { __typename } }`, nil)["get"]; g != nil {
		t.Errorf("ada gets bob's record: %v", g)
	}
	if _, _, code := ada.fail(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "bob1"}, "title": "mine now"}}}); code != "FORBIDDEN" {
		t.Errorf("ada upserts bob's record: %s, want FORBIDDEN", code)
	}
	if title := path(bob.data(`{ get(type: Book, id: "bob1") { ... on Book { title } } }`, nil), "get", "title"); title != "bob one" {
		t.Errorf("bob's record after ada's refused upsert: %v", title)
	}
	if n := ada.data(`mutation { trash(type: Book, arcql: "*") }`, nil)["trash"]; n != float64(2) {
		t.Errorf("ada trashes * = %v, want her 2", n)
	}
	ada.data(`mutation { untrash(type: Book, arcql: "*") }`, nil)
	if n := ada.data(`mutation { delete(type: Book, arcql: "price > 1") }`, nil)["delete"]; n != float64(1) {
		t.Errorf("ada deletes price > 1 = %v, want 1 (her own)", n)
	}
	if got := bob.names("Book", "*"); len(got) != 1 {
		t.Errorf("bob's records after ada's delete: %v", got)
	}
	ada.data(upsertDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"core": map[string]any{"id": "adas"}, "name": "Ada"}}})
	// A reference may name a record one cannot read (it exists): stored,
	// and read through as nothing.
	ada.data(`mutation { link(from: Author, to: Book, via: "booklist", whereFromID: "adas", andToID: "bob1") }`, nil)
	ada.data(upsertDoc, map[string]any{"v": map[string]any{"Author": map[string]any{"core": map[string]any{"id": "adas"}, "bestbook": map[string]any{"core": map[string]any{"id": "bob1"}}}}})
	through := `{ get(type: Author, id: "adas") { ... on Author { bestbook { title } booklist { title } } } }`
	if got := ada.data(through, nil); path(got, "get", "bestbook") != nil || len(path(got, "get", "booklist").([]any)) != 0 {
		t.Errorf("ada reads bob's book through her references: %s", dump(got))
	}
	if got := c.data(through, nil); path(got, "get", "bestbook", "title") != "bob one" || path(got, "get", "booklist", 0, "title") != "bob one" {
		t.Errorf("the instance token reads ada's references to bob's book: %s", dump(got))
	}
	if _, _, code := ada.fail(`mutation { link(from: Author, to: Book, via: "booklist", whereFromID: "adas", andToID: "nope") }`, nil); code != "NOT_FOUND" {
		t.Errorf("ada links a book that does not exist: %s, want NOT_FOUND", code)
	}
	// An account reads and updates its own Account, but not its flags,
	// and no other account.
	ada.data(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": adaID}, "username": "ada2"}}})
	if _, msg, code := ada.fail(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": adaID}, "emails": []any{"ada@example.com"}}}}); code != "FORBIDDEN" || !strings.Contains(msg, "requestEmailChange") {
		t.Errorf("ada sets her e-mail without verifying it: %s %q, want FORBIDDEN naming requestEmailChange", code, msg)
	}
	if _, _, code := ada.fail(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": adaID}, "verified": true}}}); code != "FORBIDDEN" {
		t.Errorf("ada verifies herself: %s, want FORBIDDEN", code)
	}
	if got := ada.names("Account", "*"); len(got) != 1 {
		t.Errorf("accounts ada sees: %d, want 1", len(got))
	}
}

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.newAccount("ada", "", "correct horse battery")
	// The throttle's windows are aligned to the clock: start the test at
	// one's start, so that none ends mid-count.
	startWindow(c.env.Accounts, 15*time.Minute)
	bad := map[string]any{"u": "ada", "p": "wrong password!"}
	for i := 0; i < 10; i++ {
		if status, body := c.env.GraphQL(c.domain, "", loginDoc, bad); status != 200 || path(body, "data", "login", "errorCode") != "INVALID_CREDENTIALS" {
			t.Fatalf("failure %d: %d %s", i+1, status, dump(body))
		}
	}
	res, raw := c.env.DoRaw("POST", "/graphql", map[string]string{"core-domain": c.domain},
		map[string]any{"query": loginDoc, "variables": map[string]any{"u": "ada", "p": "correct horse battery"}})
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || !strings.Contains(string(raw), "RATE_LIMITED") {
		t.Fatalf("the right password after 10 failures: %d Retry-After=%q %s", res.StatusCode, res.Header.Get("Retry-After"), raw)
	}
	c.env.Accounts.Shift(15*time.Minute + time.Second)
	c.login("ada", "correct horse battery")

	// Per client address: failures against many names count together, and
	// aliased logins in one document count one by one (within one
	// minute's window).
	startWindow(c.env.Accounts, time.Minute)
	var doc strings.Builder
	doc.WriteString("{")
	for i := 0; i < 11; i++ {
		doc.WriteString(` l` + string(rune('a'+i)) + `: login(username: "nobody` + string(rune('a'+i)) + `", password: "wrong password!") { errorCode }`)
	}
	doc.WriteString("}")
	status, body := c.env.GraphQL(c.domain, "", doc.String(), nil)
	failed, refused := 0, 0
	for _, v := range path(body, "data").(map[string]any) {
		if path(v, "errorCode") == "INVALID_CREDENTIALS" {
			failed++
		}
	}
	for _, e := range path(body, "errors").([]any) {
		if path(e, "extensions", "code") == "RATE_LIMITED" {
			refused++
		}
	}
	if status != 429 || failed != 10 || refused != 1 {
		t.Errorf("11 aliased failed logins: %d, %d failed, %d refused; want 429, 10, 1: %s", status, failed, refused, dump(body))
	}
}

// hypiSignUpDoc is the sign-up document of Hypi's example apps: the
// e-mail an object literal with a variable inside.
const hypiSignUpDoc = `mutation createAccount($username: String!, $password: String!, $email: String!) {
  createAccount(value: {username: $username, password: {value: $password}, emails: [{value: $email}]}) { id created createdBy }
}`

// TestEmailAsObject checks that an e-mail may be given as a string or as
// Hypi's {value: "…"}, in a literal (with a variable inside, as Hypi's
// example apps sign up) or a variable; it is kept as the address (login by
// e-mail finds it) and served as Hypi's object {value type}.
func TestEmailAsObject(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	const pw = "Bench-User-Pass-1"
	c.data(`mutation { createAccount(value: {username: "lit", password: {value: "Bench-User-Pass-1"}, emails: [{value: "lit@example.com"}]}) { id } }`, nil)
	c.data(`mutation { createAccount(value: {username: "str", password: {value: "Bench-User-Pass-1"}, emails: ["str@example.com"]}) { id } }`, nil)
	c.data(createAccountDoc, map[string]any{"v": map[string]any{"username": "var", "password": map[string]any{"value": pw},
		"emails": []any{map[string]any{"value": "var@example.com"}}}})
	c.data(createAccountDoc, map[string]any{"v": map[string]any{"username": "strvar", "password": map[string]any{"value": pw},
		"emails": []any{"strvar@example.com"}}})
	_, body := c.env.GraphQL(c.domain, c.token, hypiSignUpDoc, map[string]any{"username": "hyp", "password": pw, "email": "hyp@example.com"})
	if id, _ := path(body, "data", "createAccount", "id").(string); id == "" {
		t.Fatalf("Hypi's sign-up: %s", dump(body))
	}
	for _, who := range []string{"lit", "str", "var", "strvar", "hyp"} {
		_, body := c.env.GraphQL(c.domain, "", loginByEmailDoc, map[string]any{"e": who + "@example.com", "p": pw})
		if token, _ := path(body, "data", "loginByEmail", "sessionToken").(string); token == "" {
			t.Errorf("loginByEmail %s@example.com: %s", who, dump(body))
		}
		found := c.data(`query($q: String!) { find(type: Account, arcql: $q) { edges { node { ... on Account { emails { value type } } } } } }`,
			map[string]any{"q": "emails = '" + who + "@example.com'"})
		want := []any{map[string]any{"node": map[string]any{"emails": []any{map[string]any{"value": who + "@example.com", "type": nil}}}}}
		if diff := cmp.Diff(want, path(found, "find", "edges")); diff != "" {
			t.Errorf("%s's emails (-want +got):\n%s", who, diff)
		}
	}
	for _, bad := range []string{`{value: 3}`, `{value: "x@example.com", primary: true}`, `{value: "x@example.com", type: "work"}`,
		`{address: "x@example.com"}`, `{value: "not an address"}`} {
		status, body := c.env.GraphQL(c.domain, c.token, `mutation { createAccount(value: {username: "bad", password: {value: "Bench-User-Pass-1"}, emails: [`+bad+`]}) { id } }`, nil)
		if status != 400 || !strings.Contains(dump(body), "EmailInput") {
			t.Errorf("emails: [%s]: %d %s; want 400 naming EmailInput", bad, status, dump(body))
		}
	}
	_, body = c.env.GraphQL(c.domain, c.token, hypiSignUpDoc, map[string]any{"username": "bad", "password": pw, "email": "not an address"})
	msg, code := servertest.FirstError(body)
	if want := `value.emails[0]: "not an address" is not an e-mail address`; code != "BAD_REQUEST" || !strings.HasPrefix(msg, want) {
		t.Errorf("Hypi's sign-up with a bad e-mail: %s %q; want BAD_REQUEST %q", code, msg, want)
	}
	status, body := c.env.GraphQL(c.domain, c.token, createAccountDoc, map[string]any{"v": map[string]any{"username": "bad", "password": map[string]any{"value": pw},
		"emails": []any{map[string]any{"value": "t@example.com", "type": "work"}}}})
	if status != 400 || !strings.Contains(dump(body), "EmailInput") {
		t.Errorf("emails [{value, type}] in a variable: %d %s; want 400 naming EmailInput", status, dump(body))
	}
	if n := len(path(c.data(`{ find(type: Account, arcql: "username = 'bad'") { edges { cursor } } }`, nil), "find", "edges").([]any)); n != 0 {
		t.Errorf("refused sign-ups wrote %d accounts", n)
	}
}

// TestLoginIgnoresStaleToken: a client that always sends its stored token
// logs in again after that token stopped working (logged out, or junk),
// through GraphQL and each REST login form; anything else with such a
// token still answers 401.
func TestLoginIgnoresStaleToken(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.newAccount("ada", "ada@example.com", "correct horse battery")
	stale := c.login("ada", "correct horse battery")
	stale.data(`mutation { logout }`, nil)
	const pw = "correct horse battery"
	for _, token := range []string{stale.token, "junk", "Bearer cs1.junk"} {
		h := map[string]string{tenant.Header: c.domain, "authorization": token}
		if status, body := c.env.GraphQL(c.domain, token, loginDoc, map[string]any{"u": "ada", "p": pw}); status != 200 || path(body, "data", "login", "sessionToken") == nil {
			t.Errorf("GraphQL login with token %.12q: %d %s", token, status, dump(body))
		}
		if status, body := c.env.GraphQL(c.domain, token, loginByEmailDoc, map[string]any{"e": "ada@example.com", "p": pw}); status != 200 || path(body, "data", "loginByEmail", "sessionToken") == nil {
			t.Errorf("GraphQL loginByEmail with token %.12q: %d %s", token, status, dump(body))
		}
		if status, body := c.env.Do("POST", "/rest/v1/login", h, map[string]any{"username": "ada", "password": pw}); status != 200 || path(body, "data", "login", "sessionToken") == nil {
			t.Errorf("POST /rest/v1/login with token %.12q: %d %s", token, status, dump(body))
		}
		q := url.Values{"email": {"ada@example.com"}, "password": {pw}}
		if status, body := c.env.Do("GET", "/rest/v1/fn/query/loginByEmail?"+q.Encode(), h, nil); status != 200 || path(body, "data", "loginByEmail", "sessionToken") == nil {
			t.Errorf("GET /rest/v1/fn/query/loginByEmail with token %.12q: %d %s", token, status, dump(body))
		}
		// Not a login: the token is refused.
		if status, _ := c.env.GraphQL(c.domain, token, `{ get(type: Book, id: "x") { __typename } }`, nil); status != 401 {
			t.Errorf("a query with token %.12q: %d, want 401", token, status)
		}
		if status, _ := c.env.GraphQL(c.domain, token, `{ a: login(username: "ada", password: "x") { errorCode } get(type: Book, id: "x") { __typename } }`, nil); status != 401 {
			t.Errorf("a login beside a query with token %.12q: %d, want 401", token, status)
		}
		if status, _ := c.env.Do("GET", "/rest/v1/Book", h, nil); status != 401 {
			t.Errorf("GET /rest/v1/Book with token %.12q: %d, want 401", token, status)
		}
		if status, _ := c.env.Do("GET", "/rest/v1/openapi.json", h, nil); status != 401 {
			t.Errorf("GET /rest/v1/openapi.json with token %.12q: %d, want 401", token, status)
		}
	}
}
