package gql_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

const upsertIDsDoc = `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`

// TestHypiPasswordReminder: Hypi's upsert of PasswordReminder {to}, by an
// anonymous caller, through GraphQL and REST, sends a reset code as
// requestPasswordReset does: the same answer for a known and an unknown
// address, the code only in the delivered message (never in the answer,
// never found as a record), and the code sets the password.
func TestHypiPasswordReminder(t *testing.T) {
	t.Parallel()
	c, sink := mailBookstore(t)
	c.newAccount("ada", "ada@example.com", "correct horse battery")
	anon := &client{t: t, env: c.env, domain: c.domain}

	known := anon.data(upsertIDsDoc, map[string]any{"v": map[string]any{"PasswordReminder": map[string]any{"to": map[string]any{"value": "ada@example.com"}, "valid": true}}})
	unknown := anon.data(upsertIDsDoc, map[string]any{"v": map[string]any{"PasswordReminder": map[string]any{"to": "nobody@example.com"}}})
	for _, body := range []map[string]any{known, unknown} {
		list, _ := body["upsert"].([]any)
		if len(list) != 1 || path(list[0].(map[string]any), "id") == "" {
			t.Errorf("upsert of a PasswordReminder answered %s; want one request's metadata", dump(body))
		}
	}
	msgs := sink.Wait(t, 1)
	code := resetCode(t, msgs[0])
	if !strings.Contains(msgs[0].To, "ada@example.com") || len(code) < 26 {
		t.Errorf("delivered to %s the code %q", msgs[0].To, code)
	}
	// Nothing of the request is read back: not the code, not a record.
	if _, body := c.do(`{ find(type: PasswordReminder, arcql: "*") { edges { node { ... on PasswordReminder { to { value } code valid } } } } }`, nil); strings.Contains(dump(body), code) || path(body, "data", "find", "edges") == nil ||
		len(path(body, "data", "find", "edges").([]any)) != 0 {
		t.Errorf("find of PasswordReminder with the instance token: %s; want nothing", dump(body))
	}
	if st, body := c.env.Do(http.MethodPost, "/email/reset/books.test", nil, map[string]any{"code": code, "password": "new horse battery"}); st != http.StatusOK {
		t.Fatalf("the code of a PasswordReminder: %d %s", st, dump(body))
	}
	c.login("ada", "new horse battery")

	// REST writes a record with POST /rest/v1/: the same request.
	st, body := c.env.Do(http.MethodPost, "/rest/v1/", map[string]string{tenant.Header: c.domain},
		map[string]any{"values": map[string]any{"PasswordReminder": map[string]any{"to": "ada@example.com"}}})
	if st != http.StatusOK || strings.Contains(dump(body), "ada@") {
		t.Fatalf("PasswordReminder through REST: %d %s", st, dump(body))
	}
	rest := resetCode(t, sink.Wait(t, 2)[1])
	anon.data(resetDoc, map[string]any{"c": rest, "p": "third horse battery"})
	c.login("ada", "third horse battery")

	// What the instance's operator decides, a client does not write; a
	// request is upserted apart from records.
	for _, v := range []map[string]any{
		{"PasswordReminder": map[string]any{"to": "ada@example.com", "subject": "Click here"}},
		{"PasswordReminder": map[string]any{"to": "ada@example.com", "code": "ABC"}},
		{"PasswordReminder": map[string]any{"to": "not an address"}},
		{"PasswordReminder": map[string]any{"to": "ada@example.com"}, "Book": map[string]any{"title": "x"}},
	} {
		if _, msg, code := c.fail(upsertIDsDoc, map[string]any{"v": v}); code != "BAD_REQUEST" || msg == "" {
			t.Errorf("upsert %v: %s %q; want BAD_REQUEST", v, code, msg)
		}
	}
}

// TestHypiEmailVerification: Hypi's upsert of EmailVerification {email,
// redirectTo}, through GraphQL and REST, sends the verification link as
// requestEmailVerification does; following it verifies the account and
// leads to redirectTo, which must be on the instance's origins.
func TestHypiEmailVerification(t *testing.T) {
	t.Parallel()
	c, sink := verifyingBookstore(t)
	sink.Wait(t, 1) // the link sent on creation
	anon := &client{t: t, env: c.env, domain: c.domain}

	if _, msg, code := anon.fail(upsertIDsDoc, map[string]any{"v": map[string]any{"EmailVerification": map[string]any{
		"email": "ada@example.com", "redirectTo": "https://evil.example.com/"}}}); code != "BAD_REQUEST" || !strings.Contains(msg, "origins") {
		t.Errorf("a redirect off the instance's origins: %s %q", code, msg)
	}
	anon.data(upsertIDsDoc, map[string]any{"v": map[string]any{"EmailVerification": map[string]any{
		"email": map[string]any{"value": "ada@example.com"}, "redirectTo": "https://app.example.com/welcome"}}})
	link := verifyLink(t, sink.Wait(t, 2)[1])
	followToWelcome(t, link)
	c.login("ada", "correct horse battery")

	// Through REST, for an address with no account: the same answer, no mail.
	st, body := c.env.Do(http.MethodPost, "/rest/v1/", map[string]string{tenant.Header: c.domain},
		map[string]any{"values": map[string]any{"EmailVerification": []any{
			map[string]any{"email": "nobody@example.com"}, map[string]any{"email": "ada@example.com"}}}})
	if list, _ := path(body, "data", "upsert").([]any); st != http.StatusOK || len(list) != 2 {
		t.Fatalf("EmailVerification through REST: %d %s", st, dump(body))
	}
	msgs := sink.Wait(t, 3)
	if !strings.Contains(msgs[2].To, "ada@example.com") {
		t.Errorf("the REST request's link went to %s", msgs[2].To)
	}
	if res, out := servertest.Get(t, noFollow, verifyLink(t, msgs[2])); res.StatusCode != http.StatusOK || !strings.Contains(string(out), `"verified":true`) {
		t.Errorf("the REST request's link: %d %s", res.StatusCode, out)
	}
	for _, m := range sink.Messages(t) {
		if !strings.Contains(m.To, "ada@example.com") {
			t.Errorf("a message went to %s: only ada has an account", m.To)
		}
	}
}
