package webhook_test

import (
	"strings"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestWebhookAsMustExist: a Webhook whose as names no account is refused
// when it is written, naming as and the id, and nothing is kept.
func TestWebhookAsMustExist(t *testing.T) {
	t.Parallel()
	h := start(t, tenant.Settings{AnonymousRequests: true})
	upsert := `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`
	v := map[string]any{"v": map[string]any{"Webhook": map[string]any{"name": "orphan",
		"query": map[string]any{"type": "Mutation", "field": "mirror"}, "as": map[string]any{"core": map[string]any{"id": "no-such-account"}}}}}
	status, body := h.env.GraphQL("hooks.test", h.token, upsert, v)
	if msg := dump(body); status != 200 || !strings.Contains(msg, "NOT_FOUND") || !strings.Contains(msg, "Webhook[0].as: Account no-such-account does not exist") {
		t.Errorf("a webhook as an account that does not exist: %d %s", status, msg)
	}
	if res, out := h.hook("POST", "orphan", "", nil, "{}"); res.StatusCode != 404 {
		t.Errorf("the refused webhook answers %d %s, want 404 (not kept)", res.StatusCode, out)
	}
	// An account that exists is accepted, and the webhook runs.
	id := h.gql(`mutation { createAccount(value: {username: "hook", password: {value: "correct horse battery"}}) { id } }`, nil)["createAccount"].(map[string]any)["id"].(string)
	v["v"].(map[string]any)["Webhook"].(map[string]any)["as"] = map[string]any{"core": map[string]any{"id": id}}
	h.gql(upsert, v)
	if res, out := h.hook("POST", "orphan", "", nil, `{"a":1}`); res.StatusCode != 200 {
		t.Errorf("the webhook as an existing account answers %d %s", res.StatusCode, out)
	}
}
