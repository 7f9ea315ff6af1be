package rest_test

import (
	"strings"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestOwnerRuleOverREST checks that a session acts as its account through
// /rest/v1 too: its records are its own, another account's read as missing
// and cannot be changed or deleted.
func TestOwnerRuleOverREST(t *testing.T) {
	t.Parallel()
	admin := newBookstore(t, tenant.Settings{})
	for _, u := range []string{"ada", "bob"} {
		if status, body := admin.do("POST", "/fn/mutation/createAccount", map[string]any{"value": map[string]any{
			"username": u, "password": map[string]any{"value": u + "'s password"}}}); status != 200 {
			t.Fatalf("createAccount %s: %d %s", u, status, dump(body))
		}
	}
	session := func(u string) *client {
		_, body := admin.env.Do("POST", "/rest/v1/login", map[string]string{tenant.Header: admin.domain}, map[string]any{"username": u, "password": u + "'s password"})
		token, _ := body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)
		if token == "" {
			t.Fatalf("login %s: %s", u, dump(body))
		}
		return &client{t: t, env: admin.env, domain: admin.domain, token: token}
	}
	ada, bob := session("ada"), session("bob")
	if status, body := ada.do("POST", "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "adas"}, "title": "Ada's"}}}); status != 200 {
		t.Fatalf("ada's POST: %d %s", status, dump(body))
	}
	if status, _ := ada.do("GET", "/Book/adas", nil); status != 200 {
		t.Errorf("ada reads her book: %d", status)
	}
	if status, _ := bob.do("GET", "/Book/adas", nil); status != 404 {
		t.Errorf("bob reads ada's book: %d, want 404", status)
	}
	if status, body := bob.do("PUT", "/", map[string]any{"values": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "adas"}, "title": "Bob's now"}}}); status != 403 {
		t.Errorf("bob updates ada's book: %d %s, want 403", status, dump(body))
	}
	if status, body := bob.do("DELETE", "/Book/adas", nil); status != 200 || body["data"].(map[string]any)["delete"] != float64(0) {
		t.Errorf("bob deletes ada's book: %d %s, want 0 deleted", status, dump(body))
	}
	if status, body := admin.do("GET", "/Book/adas", nil); status != 200 || !strings.Contains(dump(body), `"title": "Ada's"`) {
		t.Errorf("ada's book after bob's refused writes: %d %s", status, dump(body))
	}
}
