package gql_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/poll"

	"github.com/corehq/core/internal/mailtest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// mailInstance makes instance domain (app notes) on env, sending through
// the mail server at addr with tls "none".
func mailInstance(t *testing.T, env *servertest.Env, domain, addr string) string {
	t.Helper()
	env.PutRelease("notes", "v1", "type Note { text: String }")
	token := env.CreateInstance(domain, "notes", "v1", tenant.Settings{})
	host, port, _ := strings.Cut(addr, ":")
	st, body := env.Admin(http.MethodPatch, "/instances/"+domain, map[string]any{"smtp": map[string]any{
		"host": host, "port": atoi(t, port), "tls": "none", "from": "Notes <notes@example.com>"}})
	if st != http.StatusOK {
		t.Fatalf("setting smtp: %d %s", st, dump(body))
	}
	return token
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// outbox returns the instance's messages as the admin API shows them.
func outbox(t *testing.T, env *servertest.Env, domain string) []map[string]any {
	t.Helper()
	st, body := env.Admin(http.MethodGet, "/instances/"+domain+"/outbox", nil)
	if st != http.StatusOK {
		t.Fatalf("outbox: %d %s", st, dump(body))
	}
	var out []map[string]any
	for _, m := range body["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// waitOutbox polls the outbox (for a generous minute) until ok holds.
func waitOutbox(t *testing.T, env *servertest.Env, domain, what string, ok func([]map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ms := outbox(t, env, domain)
		if ok(ms) {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outbox never showed %s: %s", what, dump(ms))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sendTest(t *testing.T, env *servertest.Env, domain, to string) string {
	t.Helper()
	st, body := env.Admin(http.MethodPost, "/instances/"+domain+"/mail/test", map[string]any{"to": to})
	if st != http.StatusAccepted {
		t.Fatalf("test message: %d %s", st, dump(body))
	}
	return body["id"].(string)
}

// TestMailSettings: the smtp password is write-only (shown as
// passwordSet, kept sealed in the store, kept when other fields change);
// bad settings and templates are refused naming the problem.
func TestMailSettings(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	mailInstance(t, env, "settings.test", "127.0.0.1:2525")
	const secret = "smtp-password-not-in-clear"
	st, body := env.Admin(http.MethodPatch, "/instances/settings.test", map[string]any{"smtp": map[string]any{"username": "notes", "password": secret}})
	if st != http.StatusOK {
		t.Fatalf("PATCH: %d %s", st, dump(body))
	}
	st, body = env.Admin(http.MethodPatch, "/instances/settings.test", map[string]any{"smtp": map[string]any{"port": 2526}})
	if st != http.StatusOK {
		t.Fatalf("PATCH: %d %s", st, dump(body))
	}
	_, body = env.Admin(http.MethodGet, "/instances/settings.test", nil)
	smtp := body["smtp"].(map[string]any)
	if smtp["password"] != nil || smtp["passwordSet"] != true || smtp["port"] != 2526.0 || smtp["username"] != "notes" {
		t.Errorf("smtp shown as %v; want no password, passwordSet, port 2526, username notes", smtp)
	}
	if strings.Contains(dump(body), secret) {
		t.Error("the admin API shows the smtp password")
	}
	inst, _ := env.Directory.Lookup("settings.test")
	if inst.Settings.SMTP.Password != secret {
		t.Error("the smtp password was not kept across a change of the port")
	}
	docs, err := env.Store.ListDocs(t.Context(), "instance")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if strings.Contains(string(d), secret) {
			t.Error("the store keeps the smtp password in clear")
		}
	}
	for _, c := range []struct {
		patch map[string]any
		want  string
	}{
		{map[string]any{"smtp": map[string]any{"tls": "ssl"}}, "smtp.tls"},
		{map[string]any{"smtp": map[string]any{"from": "nobody"}}, "smtp.from"},
		{map[string]any{"smtp": map[string]any{"host": "smtp://x"}}, "smtp.host"},
		{map[string]any{"mailTemplates": map[string]any{"passwordReset": map[string]any{"text": "{{.Code"}}}, "mailTemplates.passwordReset"},
		{map[string]any{"mailTemplates": map[string]any{"passwordReset": map[string]any{"text": "{{range 1000000000}}{{end}}"}}}, "range"},
		{map[string]any{"mailTemplates": map[string]any{"welcome": map[string]any{"text": "hi"}}}, "welcome"},
	} {
		st, body := env.Admin(http.MethodPatch, "/instances/settings.test", c.patch)
		if msg, _ := servertest.FirstError(body); st != http.StatusBadRequest || !strings.Contains(msg, c.want) {
			t.Errorf("PATCH %v: %d %q; want 400 naming %s", c.patch, st, msg, c.want)
		}
	}
	st, body = env.Admin(http.MethodPost, "/instances/settings.test/mail/preview", map[string]any{"name": "passwordReset",
		"template": map[string]any{"subject": "Code for {{.App}}"}})
	if st != http.StatusOK || body["subject"] != "Code for notes" || !strings.Contains(body["text"].(string), "SAMPLE-CODE") {
		t.Errorf("preview: %d %s", st, dump(body))
	}
}

// TestMailServerDownThenUp: a message queued while the instance's mail
// server is down is retried (the outbox shows the attempts and the last
// error) and delivered once after the server comes up.
func TestMailServerDownThenUp(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	addr := mailtest.FreeAddr(t)
	mailInstance(t, env, "down.test", addr)
	id := sendTest(t, env, "down.test", "ada@example.com")
	waitOutbox(t, env, "down.test", "a failed attempt", func(ms []map[string]any) bool {
		return len(ms) == 1 && ms[0]["id"] == id && ms[0]["status"] == "queued" && ms[0]["attempts"].(float64) >= 2 &&
			strings.Contains(ms[0]["lastError"].(string), "dial")
	})
	sink := mailtest.Start(t, addr)
	got := sink.Wait(t, 1)
	if got[0].To != "[<ada@example.com>]" && got[0].To != "[ada@example.com]" || !strings.Contains(got[0].Text, "The mail settings of down.test work.") {
		t.Errorf("delivered %+v", got[0])
	}
	waitOutbox(t, env, "down.test", "the message sent", func(ms []map[string]any) bool {
		return ms[0]["status"] == "sent" && ms[0]["lastError"] == nil
	})
	// A second message is a barrier: once it is delivered, the worker
	// has passed over the first again.
	sendTest(t, env, "down.test", "bob@example.com")
	got = sink.Wait(t, 2)
	waitOutbox(t, env, "down.test", "both sent", func(ms []map[string]any) bool {
		return len(ms) == 2 && ms[1]["status"] == "sent"
	})
	if got = sink.Messages(t); len(got) != 2 || !strings.Contains(got[1].To, "bob@example.com") {
		t.Errorf("delivered %d messages, want the first once and then the second: %+v", len(got), got)
	}
}

// TestMailTwoProcessesSendOnce: two servers on one store, each with its
// own worker, send each message of the shared outbox once: on MongoDB as
// two processes (a store handle each), on bolt two workers on one file.
func TestMailTwoProcessesSendOnce(t *testing.T) {
	t.Parallel()
	a, b := twoServers(t)
	sink := mailtest.Start(t, "127.0.0.1:0")
	mailInstance(t, a, "twice.test", fmt.Sprintf("%s:%d", sink.Host, sink.Port))
	poll.Until(t, "the second process to see the instance's smtp setting", func() bool {
		inst, ok := b.Directory.Lookup("twice.test")
		return ok && inst.Settings.SMTP != nil
	})
	const n = 20
	for i := range n {
		env := a
		if i%2 == 1 {
			env = b
		}
		sendTest(t, env, "twice.test", fmt.Sprintf("user%d@example.com", i))
	}
	sink.Wait(t, n)
	waitOutbox(t, a, "twice.test", "every message sent", func(ms []map[string]any) bool {
		for _, m := range ms {
			if m["status"] != "sent" {
				return false
			}
		}
		return len(ms) == n
	})
	sendTest(t, b, "twice.test", "barrier@example.com")
	sendTest(t, a, "twice.test", "barrier2@example.com")
	got := sink.Wait(t, n+2)
	seen := map[string]int{}
	for _, m := range sink.Messages(t) {
		seen[m.To]++
	}
	if len(got) != n+2 || len(seen) != n+2 {
		t.Errorf("delivered %d messages to %d addresses, want %d once each: %v", len(got), len(seen), n+2, seen)
	}
}

const (
	requestResetDoc = `mutation($e: String!) { requestPasswordReset(email: $e) }`
	resetDoc        = `mutation($c: String!, $p: String!) { resetPassword(code: $c, password: $p) }`
)

// mailBookstore starts a server with instance books.test sending through
// a started smtpsink, anonymous requests on.
func mailBookstore(t *testing.T) (*client, *mailtest.Sink) {
	t.Helper()
	c := newBookstore(t)
	sink := mailtest.Start(t, "127.0.0.1:0")
	st, body := c.env.Admin(http.MethodPatch, "/instances/books.test", map[string]any{"anonymousRequests": true, "smtp": map[string]any{
		"host": sink.Host, "port": sink.Port, "tls": "none", "from": "Books <books@example.com>"}})
	if st != http.StatusOK {
		t.Fatalf("setting smtp: %d %s", st, dump(body))
	}
	return c, sink
}

var codeLine = regexp.MustCompile(`Your code: (\S+)`)

// resetCode returns the code of a delivered password reset message.
func resetCode(t *testing.T, m mailtest.Message) string {
	t.Helper()
	got := codeLine.FindStringSubmatch(m.Text)
	if got == nil {
		t.Fatalf("no code in the message %q", m.Text)
	}
	return got[1]
}

// TestPasswordReset drives a reset from request to new password through
// a real mail server: the same answer for a known and an unknown address,
// the code read from the delivered message (130 bits, kept only hashed),
// a wrong code refused, the right one setting the password through POST
// /email/reset/{domain} and ending every session, the code refused when
// used again and once expired.
func TestPasswordReset(t *testing.T) {
	t.Parallel()
	c, sink := mailBookstore(t)
	c.newAccount("ada", "ada@example.com", "correct horse battery")
	s1, s2 := c.login("ada", "correct horse battery"), c.login("ada", "correct horse battery")
	anon := &client{t: t, env: c.env, domain: c.domain}

	_, known := anon.do(requestResetDoc, map[string]any{"e": "ada@example.com"})
	_, unknown := anon.do(requestResetDoc, map[string]any{"e": "nobody@example.com"})
	if dump(known) != dump(unknown) || path(known, "data", "requestPasswordReset") != true {
		t.Errorf("a known address answered %s, an unknown one %s; want the same true", dump(known), dump(unknown))
	}
	msgs := sink.Wait(t, 1)
	code := resetCode(t, msgs[0])
	if !strings.Contains(msgs[0].To, "ada@example.com") || len(code) < 26 {
		t.Errorf("delivered to %s the code %q; want ada's, at least 26 base32 characters (128 bits)", msgs[0].To, code)
	}
	for _, kind := range []string{"code", "mail-outbox"} {
		docs, err := c.env.Store.ListDocs(t.Context(), kind)
		if err != nil {
			t.Fatal(err)
		}
		for k, d := range docs {
			if strings.Contains(k+string(d), code) {
				t.Errorf("the store keeps the reset code in clear (%s %s)", kind, k)
			}
		}
	}

	post := func(body any) (int, map[string]any) {
		return c.env.Do(http.MethodPost, "/email/reset/books.test", nil, body)
	}
	if st, body := post(map[string]any{"code": "not-the-code", "password": "new horse battery"}); st != http.StatusBadRequest {
		t.Errorf("a wrong code: %d %s, want 400", st, dump(body))
	}
	if st, body := post(map[string]any{"code": code, "password": "short"}); st != http.StatusBadRequest {
		t.Errorf("a short password: %d %s, want 400", st, dump(body))
	}
	if st, body := post(map[string]any{"code": code, "password": "new horse battery"}); st != http.StatusOK || body["reset"] != true {
		t.Fatalf("the code from the message: %d %s, want 200", st, dump(body))
	}
	for i, s := range []*client{s1, s2} {
		if st, _ := s.do(`{ find(type: Book, arcql: "*") { edges { cursor } } }`, nil); st != http.StatusUnauthorized {
			t.Errorf("session %d after the reset: %d, want 401", i+1, st)
		}
	}
	if _, body := anon.do(loginDoc, map[string]any{"u": "ada", "p": "correct horse battery"}); path(body, "data", "login", "errorCode") != "INVALID_CREDENTIALS" {
		t.Errorf("the old password after the reset: %s", dump(body))
	}
	c.login("ada", "new horse battery")
	if st, msg, code := anon.fail(resetDoc, map[string]any{"c": code, "p": "third horse battery"}); st != http.StatusOK || code != "BAD_REQUEST" || !strings.Contains(msg, "used or expired") {
		t.Errorf("the code used again: %d %s %q", st, code, msg)
	}

	// A code past its 30 minutes is refused, and changes nothing. (Asked
	// through REST, as any mutation may be.)
	if st, body := c.env.Do(http.MethodPost, "/rest/v1/fn/mutation/requestPasswordReset", map[string]string{tenant.Header: c.domain},
		map[string]any{"email": "ada@example.com"}); st != http.StatusOK || path(body, "data", "requestPasswordReset") != true {
		t.Fatalf("requestPasswordReset through REST: %d %s", st, dump(body))
	}
	late := resetCode(t, sink.Wait(t, 2)[1])
	c.env.Accounts.Shift(31 * time.Minute)
	if _, msg, code := anon.fail(resetDoc, map[string]any{"c": late, "p": "third horse battery"}); code != "BAD_REQUEST" || !strings.Contains(msg, "expired") {
		t.Errorf("an expired code: %s %q", code, msg)
	}
	c.login("ada", "new horse battery")
	for _, m := range sink.Messages(t) {
		if !strings.Contains(m.To, "ada@example.com") {
			t.Errorf("a message went to %s: only ada has an account", m.To)
		}
	}
}

// TestPasswordResetThrottled: requests for one address are throttled
// (429 with retryAfter) before any lookup, known or not.
func TestPasswordResetThrottled(t *testing.T) {
	t.Parallel()
	c, _ := mailBookstore(t)
	anon := &client{t: t, env: c.env, domain: c.domain}
	limited := 0
	for range 12 {
		st, body := anon.do(requestResetDoc, map[string]any{"e": "nobody@example.com"})
		if _, code := servertest.FirstError(body); code == "RATE_LIMITED" {
			limited++
			if st != http.StatusTooManyRequests && st != http.StatusOK {
				t.Errorf("a throttled request answered %d", st)
			}
		}
	}
	if limited == 0 {
		t.Error("12 reset requests for one address in a row were never throttled")
	}
}

var linkLine = regexp.MustCompile(`https?://\S+/email/verify/\S+`)

// verifyLink returns the link of a delivered verification message.
func verifyLink(t *testing.T, m mailtest.Message) string {
	t.Helper()
	link := linkLine.FindString(m.Text)
	if link == "" {
		t.Fatalf("no link in the message %q", m.Text)
	}
	return link
}

// verifyingBookstore is mailBookstore requiring e-mail verification, with
// links to its server and redirects to https://app.example.com, and the
// account ada (ada@example.com), sent a link on creation.
func verifyingBookstore(t *testing.T) (*client, *mailtest.Sink) {
	t.Helper()
	c, sink := mailBookstore(t)
	st, body := c.env.Admin(http.MethodPatch, "/instances/books.test", map[string]any{"requireEmailVerification": true,
		"publicUrl": c.env.URL, "cors": map[string]any{"allowedOrigins": []string{"https://app.example.com"}}})
	if st != http.StatusOK {
		t.Fatalf("settings: %d %s", st, dump(body))
	}
	c.newAccount("ada", "ada@example.com", "correct horse battery")
	return c, sink
}

// noFollow is an HTTP client that answers a redirect instead of following it.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// followToWelcome opens a verification link asked with redirectTo
// https://app.example.com/welcome: it must answer 303 there.
func followToWelcome(t *testing.T, link string) {
	t.Helper()
	res, out := servertest.Get(t, noFollow, link)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "https://app.example.com/welcome" {
		t.Errorf("following the link: %d to %q: %s", res.StatusCode, res.Header.Get("Location"), out)
	}
}

// TestEmailVerification: under requireEmailVerification a new account is
// sent a link and cannot log in (EMAIL_NOT_VERIFIED) until the link,
// followed with a real HTTP client, verifies it; a link leads on only to
// the instance's origins, and works once.
func TestEmailVerification(t *testing.T) {
	t.Parallel()
	c, sink := verifyingBookstore(t)
	first := verifyLink(t, sink.Wait(t, 1)[0])
	anon := &client{t: t, env: c.env, domain: c.domain}
	if _, body := anon.do(loginDoc, map[string]any{"u": "ada", "p": "correct horse battery"}); path(body, "data", "login", "errorCode") != "EMAIL_NOT_VERIFIED" ||
		path(body, "data", "login", "sessionToken") != nil {
		t.Errorf("login before verification: %s", dump(body))
	}
	const verify = `mutation($e: String!, $r: String) { requestEmailVerification(email: $e, redirectTo: $r) }`
	if _, msg, code := anon.fail(verify, map[string]any{"e": "ada@example.com", "r": "https://evil.example.com/welcome"}); code != "BAD_REQUEST" || !strings.Contains(msg, "origins") {
		t.Errorf("a redirect off the instance's origins: %s %q", code, msg)
	}
	anon.data(verify, map[string]any{"e": "ada@example.com", "r": "https://app.example.com/welcome"})
	second := verifyLink(t, sink.Wait(t, 2)[1])

	followToWelcome(t, second)
	c.login("ada", "correct horse battery")
	if res, out := servertest.Get(t, noFollow, second); res.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), "used or expired") {
		t.Errorf("the link followed again: %d %s", res.StatusCode, out)
	}
	if res, out := servertest.Get(t, noFollow, first); res.StatusCode != http.StatusOK || !strings.Contains(string(out), `"verified":true`) {
		t.Errorf("the link sent on creation: %d %s", res.StatusCode, out)
	}

	// A new address replaces the old only once its link is followed.
	ada := c.login("ada", "correct horse battery")
	ada.data(`mutation { requestEmailChange(email: "ada.new@example.com") }`, nil)
	msgs := sink.Wait(t, 3)
	if !strings.Contains(msgs[2].To, "ada.new@example.com") {
		t.Fatalf("the change's link went to %s", msgs[2].To)
	}
	byEmail := func(email string) string {
		_, body := anon.do(loginByEmailDoc, map[string]any{"e": email, "p": "correct horse battery"})
		code, _ := path(body, "data", "loginByEmail", "errorCode").(string)
		return code
	}
	if byEmail("ada.new@example.com") != "INVALID_CREDENTIALS" || byEmail("ada@example.com") != "" {
		t.Error("the new address counts before its link is followed")
	}
	if res, out := servertest.Get(t, noFollow, verifyLink(t, msgs[2])); res.StatusCode != http.StatusOK {
		t.Errorf("following the change's link: %d %s", res.StatusCode, out)
	}
	if byEmail("ada.new@example.com") != "" || byEmail("ada@example.com") != "INVALID_CREDENTIALS" {
		t.Error("after the change's link, the new address does not replace the old")
	}
}
