package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestConsoleOnItsOwnListener: with a console listener (cored serve
// --console-addr) the console is served there, with the admin API and
// /graphql its pages call, and nowhere on the main listener; the console's
// listener serves nothing of a tenant's (no webhooks, no REST, no image
// registry), while the main listener goes on serving them.
//
// hostile checklist 51: the origin that holds the admin token serves no
// tenant content.
func TestConsoleOnItsOwnListener(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t, servertest.WithConsoleListener())
	if env.ConsoleURL == "" || env.ConsoleURL == env.URL {
		t.Fatalf("console listener %q beside %q", env.ConsoleURL, env.URL)
	}
	env.PutRelease("shop", "v1", `type Item { name: String }`)
	token := env.CreateInstance("shop.test", "shop", "v1", tenant.Settings{AnonymousRequests: true})

	do := func(base, method, path string, headers map[string]string, body string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, b := servertest.Send(t, nil, req)
		return res.StatusCode, string(b), res.Header
	}
	admin := env.AdminHeaders()
	query, _ := json.Marshal(map[string]any{"query": `{ __typename }`})
	data := map[string]string{"core-domain": "shop.test", "authorization": token, "content-type": "application/json"}

	// The console and what it calls, on the console's listener.
	for _, path := range []string{"/console/", "/console/app.js", "/console/api.js"} {
		status, _, h := do(env.ConsoleURL, "GET", path, nil, "")
		if status != 200 || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("console listener %s: %d %v, want 200 with the console's policy", path, status, h)
		}
	}
	if status, body, _ := do(env.ConsoleURL, "GET", "/admin/v1/apps", admin, ""); status != 200 || !strings.Contains(body, `"shop"`) {
		t.Errorf("console listener, admin API: %d %s", status, body)
	}
	if status, body, _ := do(env.ConsoleURL, "GET", "/admin/v1/apps", nil, ""); status != 401 {
		t.Errorf("console listener, admin API without the token: %d %s, want 401", status, body)
	}
	if status, body, _ := do(env.ConsoleURL, "POST", "/graphql", data, string(query)); status != 200 || !strings.Contains(body, `"Query"`) {
		t.Errorf("console listener, /graphql: %d %s", status, body)
	}
	if status, _, _ := do(env.ConsoleURL, "GET", "/healthz", nil, ""); status != 200 {
		t.Errorf("console listener, /healthz: %d", status)
	}

	// Nothing of a tenant's there.
	status, body, _ := do(env.ConsoleURL, "POST", "/webhook/shop.test/anything", nil, "{}")
	if status != 404 || !strings.Contains(body, "main listener") {
		t.Errorf("console listener, a webhook: %d %s, want 404 saying where webhooks are", status, body)
	}
	for _, path := range []string{"/rest/v1/Item", "/v2/"} {
		if status, body, _ := do(env.ConsoleURL, "GET", path, data, ""); status != 404 {
			t.Errorf("console listener %s: %d %s, want 404", path, status, body)
		}
	}

	// The main listener: no console, everything else.
	for _, path := range []string{"/console/", "/console/app.js", "/console"} {
		if status, body, _ := do(env.URL, "GET", path, nil, ""); status != 404 || bytes.Contains([]byte(body), []byte("<script")) {
			t.Errorf("main listener %s: %d %s, want 404", path, status, body)
		}
	}
	if status, body, _ := do(env.URL, "GET", "/admin/v1/apps", admin, ""); status != 200 {
		t.Errorf("main listener, admin API: %d %s", status, body)
	}
	if status, body, _ := do(env.URL, "POST", "/graphql", data, string(query)); status != 200 {
		t.Errorf("main listener, /graphql: %d %s", status, body)
	}
	if status, body, _ := do(env.URL, "POST", "/webhook/shop.test/anything", nil, "{}"); status != 404 || strings.Contains(body, "main listener") {
		t.Errorf("main listener, an unknown webhook: %d %s, want the webhook door's own 404", status, body)
	}
}
