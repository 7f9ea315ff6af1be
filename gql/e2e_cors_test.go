package gql_test

import (
	"net/http"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestCORSOnGraphQL: the instance's CORS policy holds on /graphql as on
// /rest/v1: a browser's preflight (no token, no core-domain) from an
// allowed origin gets the methods and headers it may use, the real
// request gets Access-Control-Allow-Origin, and another origin, or an
// instance that does not allow the origin, gets no CORS headers.
func TestCORSOnGraphQL(t *testing.T) {
	t.Parallel()
	const app, evil = "https://app.example.com", "https://evil.example"
	c := newBookstore(t)
	if status, body := c.env.Admin(http.MethodPatch, "/instances/"+c.domain, map[string]any{"cors": map[string]any{"allowedOrigins": []string{app}}}); status != 200 {
		t.Fatalf("PATCH cors: %d %s", status, dump(body))
	}
	other := c.env.CreateInstance("other.test", "bookstore", "v1", tenant.Settings{})

	preflight := func(origin string) *http.Response {
		res, _ := c.env.DoRaw(http.MethodOptions, "/graphql", map[string]string{
			"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, core-domain"}, nil)
		return res
	}
	res := preflight(app)
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != app ||
		res.Header.Get("Access-Control-Allow-Methods") != "GET, POST, OPTIONS" ||
		res.Header.Get("Access-Control-Allow-Headers") != "authorization, content-type, core-domain, x-request-id" {
		t.Errorf("preflight from %s: %d %v", app, res.StatusCode, res.Header)
	}
	if res := preflight(evil); res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from %s: %d %v, want no CORS headers", evil, res.StatusCode, res.Header)
	}

	query := map[string]any{"query": `{ __typename }`}
	post := func(domain, token, origin string) *http.Response {
		res, _ := c.env.DoRaw(http.MethodPost, "/graphql", map[string]string{
			tenant.Header: domain, "authorization": token, "Origin": origin, "content-type": "application/json"}, query)
		return res
	}
	if res := post(c.domain, c.token, app); res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != app ||
		res.Header.Get("Access-Control-Expose-Headers") == "" {
		t.Errorf("POST from %s: %d %v", app, res.StatusCode, res.Header)
	}
	if res := post(c.domain, "junk", app); res.StatusCode != 401 || res.Header.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("a refused POST from %s: %d %v, want 401 readable by the page", app, res.StatusCode, res.Header)
	}
	if res := post(c.domain, c.token, evil); res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("POST from %s: %v, want no CORS headers", evil, res.Header)
	}
	if res := post("other.test", other, app); res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("POST to an instance that does not allow %s: %d %v, want no CORS headers", app, res.StatusCode, res.Header)
	}
}
