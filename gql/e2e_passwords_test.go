package gql_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// loginAnswer logs in by username and returns the session token, or the
// errorCode when there is none. A refusal counts against the login
// throttle, so the clock is moved past its windows after one: the tests
// of passwords are not tests of the throttle.
func (c *client) loginAnswer(username, password string) (token, errorCode string) {
	c.t.Helper()
	status, body := c.env.GraphQL(c.domain, "", loginDoc, map[string]any{"u": username, "p": password})
	token, _ = path(body, "data", "login", "sessionToken").(string)
	errorCode, _ = path(body, "data", "login", "errorCode").(string)
	if token == "" && errorCode == "" {
		c.t.Fatalf("login %s answered %d %s", username, status, dump(body))
	}
	if token == "" {
		c.env.Accounts.Shift(16 * time.Minute)
	}
	return token, errorCode
}

// TestPasswordsVerifiedExactly: passwords of 8 characters of any script,
// 64 characters, emoji and other Unicode are accepted and verified byte for
// byte: one code point changed, another Unicode normalization form of the
// same text, or a difference after byte 72 (where bcrypt would truncate)
// is refused. 7 characters are refused even when they take 14 bytes;
// over 1024 bytes (1 MB too) is refused before any hashing.
//
// hostile checklist 11: passwords: 7 chars → rejected; 64 chars and
// emoji/Unicode → accepted and verified exactly; > 72 bytes never
// truncated; 1 MB → 400 before hashing.
func TestPasswordsVerifiedExactly(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	long72 := strings.Repeat("0123456789abcdef", 5)[:72] // 72 bytes
	for _, tc := range []struct {
		name, password string
		// refused are passwords differing from it that must not log in.
		refused []string
	}{
		{"64 characters", strings.Repeat("Tr0ub4dor&3-", 6)[:64], []string{strings.Repeat("Tr0ub4dor&3-", 6)[:63] + "X", strings.Repeat("Tr0ub4dor&3-", 6)[:63]}},
		{"emoji", "🐴🔋📎✔️ correct horse", []string{"🐴🔋📎✔ correct horse", "🐎🔋📎✔️ correct horse"}},
		{"8 emoji", strings.Repeat("🐴", 8), []string{strings.Repeat("🐴", 7) + "🐎", strings.Repeat("🐴", 9)}},
		{"8 two-byte letters", "éééééééé", []string{"eeeeeeee", "éééééééè"}},
		// "café crème" composed (NFC) and decomposed (NFD) are the same
		// text to a reader and different bytes: verified exactly, the
		// other form is another password.
		{"NFC", "caf\u00e9 cr\u00e8me br\u00fbl\u00e9e", []string{"cafe\u0301 cre\u0300me bru\u0302le\u0301e", "caf\u00e9 cr\u00e8me br\u00fbl\u00e9E"}},
		{"NFD", "cafe\u0301 cre\u0300me bru\u0302le\u0301e", []string{"caf\u00e9 cr\u00e8me br\u00fbl\u00e9e"}},
		{"CJK", "正しい馬の電池の留め具", []string{"正しい馬の電池の留め", "正しい馬の電池の留め具 "}},
		{"over 72 bytes", long72 + "-the tail counts", []string{long72 + "-the tail differs", long72}},
		{"1024 bytes", strings.Repeat("p", 1023) + "!", []string{strings.Repeat("p", 1023) + "?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := "u" + fmt.Sprint(len(tc.name)) + strings.ReplaceAll(tc.name, " ", "-")
			c.newAccount(user, "", tc.password)
			if token, code := c.loginAnswer(user, tc.password); token == "" {
				t.Fatalf("login with the password as set: %s", code)
			}
			for _, other := range tc.refused {
				if token, code := c.loginAnswer(user, other); token != "" || code != "INVALID_CREDENTIALS" {
					t.Errorf("login with %q: token %v, errorCode %q; want INVALID_CREDENTIALS", other, token != "", code)
				}
			}
		})
	}

	// Too short in characters, however many bytes; too long in bytes.
	for _, tc := range []struct {
		name, password, says string
	}{
		{"7 ASCII characters", "1234567", "8 characters"},
		{"7 two-byte letters (14 bytes)", "ééééééé", "8 characters"},
		{"7 emoji (28 bytes)", strings.Repeat("🐴", 7), "8 characters"},
		{"1025 bytes", strings.Repeat("x", 1025), "1024 bytes"},
		{"1 MB", strings.Repeat("x", 1_000_000), "1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := map[string]any{"username": "short", "password": map[string]any{"value": tc.password}}
			_, msg, code := c.fail(createAccountDoc, map[string]any{"v": v})
			if code != "BAD_REQUEST" || !strings.Contains(msg, "password") || !strings.Contains(msg, tc.says) {
				t.Errorf("createAccount: %s %q; want BAD_REQUEST naming the password and %s", code, msg, tc.says)
			}
			// REST answers the code's status.
			status, body := c.env.Do(http.MethodPost, "/rest/v1/fn/mutation/createAccount", map[string]string{tenant.Header: c.domain, "authorization": c.token}, map[string]any{"value": v})
			if msg, code := servertest.FirstError(body); status != 400 || code != "BAD_REQUEST" || !strings.Contains(msg, tc.says) {
				t.Errorf("POST /rest/v1/fn/mutation/createAccount: %d %s %q; want 400 BAD_REQUEST naming %s", status, code, msg, tc.says)
			}
		})
	}
	if _, msg, code := c.fail(loginDoc, map[string]any{"u": "short", "p": strings.Repeat("x", 1_000_000)}); code != "BAD_REQUEST" || !strings.Contains(msg, "1024") {
		t.Errorf("login with a 1 MB password: %s %q; want BAD_REQUEST naming 1024", code, msg)
	}
	status, body := c.env.Do(http.MethodPost, "/rest/v1/login", map[string]string{tenant.Header: c.domain}, map[string]any{"username": "short", "password": strings.Repeat("x", 1_000_000)})
	if msg, code := servertest.FirstError(body); status != 400 || code != "BAD_REQUEST" || !strings.Contains(msg, "1024") {
		t.Errorf("POST /rest/v1/login with a 1 MB password: %d %s %q; want 400 naming 1024", status, code, msg)
	}
}

// TestOversizedPasswordNotHashed: on a server whose password hashing
// cannot run (Argon2 with no lanes panics), an oversized password still
// answers BAD_REQUEST naming the limit, so it was refused before hashing;
// a password within the limits reaches the hash and fails there
// (INTERNAL, with a generic message).
//
// hostile checklist 11: 1 MB password → 400 before hashing.
func TestOversizedPasswordNotHashed(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, servertest.WithAccounts(func(a *auth.Accounts) { a.Argon2.Threads = 0 }))
	create := func(pw string) (int, string, string) {
		t.Helper()
		status, body := c.do(createAccountDoc, map[string]any{"v": map[string]any{"username": "ada", "password": map[string]any{"value": pw}}})
		msg, code := servertest.FirstError(body)
		return status, msg, code
	}
	for _, pw := range []string{strings.Repeat("x", 1_000_000), strings.Repeat("x", 1025), "short"} {
		if _, msg, code := create(pw); code != "BAD_REQUEST" || !strings.Contains(msg, "password") {
			t.Errorf("a %d-byte password where hashing fails: %s %q; want BAD_REQUEST naming the password", len(pw), code, msg)
		}
	}
	if _, msg, code := create("correct horse battery"); code != "INTERNAL" || strings.Contains(msg, "argon2") {
		t.Errorf("a valid password where hashing fails: %s %q; want INTERNAL with a generic message (the hash was reached)", code, msg)
	}
}

// TestStoredPasswordHash reads the hash createAccount stored, through the
// store: a PHC string of Argon2id with at least OWASP's parameters and a
// random salt. A server whose parameters are raised (a second process on
// the same store, as after an operator raised them) replaces the hash at
// the next successful login, and not at a failed one; the password keeps
// working on both.
//
// hostile checklist 12: stored hash is PHC Argon2id with m ≥ 19 MiB,
// t ≥ 2; raising params rehashes on next successful login.
func TestStoredPasswordHash(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	const pw = "correct horse battery"
	id := c.newAccount("ada", "", pw)
	bobID := c.newAccount("bob", "", pw)
	inst, ok := c.env.Directory.Lookup(c.domain)
	if !ok {
		t.Fatal("the instance is not in the directory")
	}
	stored := func(id string) string {
		t.Helper()
		rec, err := c.env.Store.Get(context.Background(), inst.ID, "Account", id)
		if err != nil {
			t.Fatalf("reading account %s: %v", id, err)
		}
		phc, _ := rec.Fields[auth.FieldPassword].(string)
		return phc
	}
	params := func(phc string) (m, tm, p uint32, salt, key []byte) {
		t.Helper()
		parts := strings.Split(phc, "$")
		if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != "v=19" {
			t.Fatalf("stored hash %.40q… is not a PHC string of Argon2id v=19", phc)
		}
		if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &tm, &p); err != nil {
			t.Fatalf("stored hash parameters %q: %v", parts[3], err)
		}
		var err1, err2 error
		salt, err1 = base64.RawStdEncoding.DecodeString(parts[4])
		key, err2 = base64.RawStdEncoding.DecodeString(parts[5])
		if err1 != nil || err2 != nil {
			t.Fatalf("stored hash salt or key is not base64: %v %v", err1, err2)
		}
		return m, tm, p, salt, key
	}
	ada := stored(id)
	m, tm, p, salt, key := params(ada)
	if m < 19*1024 || tm < 2 || p < 1 || len(salt) < 16 || len(key) < 32 {
		t.Errorf("stored hash m=%d KiB, t=%d, p=%d, salt %d bytes, key %d bytes; want m ≥ 19456, t ≥ 2, p ≥ 1, salt ≥ 16, key ≥ 32", m, tm, p, len(salt), len(key))
	}
	if bob := stored(bobID); bob == ada || strings.Contains(ada, pw) {
		t.Errorf("two accounts with one password have the same hash, or the hash holds the password")
	}

	raisedEnv := servertest.Start(t, servertest.WithStore(c.env.Store), servertest.WithAccounts(func(a *auth.Accounts) { a.Argon2.Time = 3 }))
	raised := &client{t: t, env: raisedEnv, domain: c.domain}
	if token, code := raised.loginAnswer("ada", "wrong horse battery"); token != "" || code != "INVALID_CREDENTIALS" {
		t.Fatalf("a wrong password on the raised server: token %v, %s", token != "", code)
	}
	if got := stored(id); got != ada {
		t.Errorf("a failed login replaced the hash")
	}
	if token, code := raised.loginAnswer("ada", pw); token == "" {
		t.Fatalf("login on the raised server: %s", code)
	}
	rehashed := stored(id)
	if _, tm, _, _, _ := params(rehashed); rehashed == ada || tm != 3 {
		t.Errorf("after a login with t raised to 3 the stored hash has t=%d (changed: %v); want 3", tm, rehashed != ada)
	}
	for _, s := range []*client{c, raised} {
		if token, code := s.loginAnswer("ada", pw); token == "" {
			t.Errorf("the password after the rehash: %s", code)
		}
	}
	if got := stored(id); got != rehashed {
		t.Errorf("a login with the raised hash replaced it again")
	}
	if stored(bobID) == "" || strings.Contains(stored(bobID), "t=3") {
		t.Errorf("bob's hash changed without a login of bob")
	}
}
