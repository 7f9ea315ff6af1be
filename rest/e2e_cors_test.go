package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/tenant"
)

// TestCORS checks preflights (no token, no core-domain: a browser sends
// neither) and the CORS headers of real requests, by each instance's
// policy.
func TestCORS(t *testing.T) {
	t.Parallel()
	const app, evil = "https://app.example.com", "https://evil.example"
	c := newBookstore(t, tenant.Settings{CORS: tenant.CORS{AllowedOrigins: []string{app}}})
	other := c.env.CreateInstance("other.test", "bookstore", "v1", tenant.Settings{})

	cors := func(res *http.Response) map[string]string {
		out := map[string]string{}
		for _, h := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers",
			"Access-Control-Max-Age", "Access-Control-Expose-Headers", "Allow"} {
			if v := res.Header.Get(h); v != "" {
				out[h] = v
			}
		}
		if v := res.Header.Values("Vary"); len(v) > 0 {
			out["Vary"] = strings.Join(v, ", ")
		}
		return out
	}
	allowed := map[string]string{
		"Access-Control-Allow-Origin":  app,
		"Access-Control-Allow-Methods": "GET, POST, PUT, DELETE, OPTIONS",
		"Access-Control-Allow-Headers": "authorization, content-type, core-domain, x-request-id",
		"Access-Control-Max-Age":       "600",
		"Allow":                        "GET, POST, PUT, DELETE, OPTIONS",
		"Vary":                         "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
	}
	refused := map[string]string{
		"Allow": "GET, POST, PUT, DELETE, OPTIONS",
		"Vary":  "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
	}
	preflight := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, core-domain"}
	}
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		status  int
		want    map[string]string
	}{
		{"preflight of an allowed origin", "OPTIONS", "/rest/v1/Book", preflight(app), 204, allowed},
		{"preflight on /", "OPTIONS", "/rest/v1/", preflight(app), 204, allowed},
		{"preflight on a record", "OPTIONS", "/rest/v1/Book/b1", preflight(app), 204, allowed},
		{"preflight on a function", "OPTIONS", "/rest/v1/fn/query/find", preflight(app), 204, allowed},
		{"preflight on login", "OPTIONS", "/rest/v1/login", preflight(app), 204, allowed},
		{"preflight on openapi.json", "OPTIONS", "/rest/v1/openapi.json", preflight(app), 204, allowed},
		{"preflight of another origin", "OPTIONS", "/rest/v1/Book", preflight(evil), 204, refused},
		{"preflight naming an instance that does not allow the origin", "OPTIONS", "/rest/v1/Book",
			merge(preflight(app), map[string]string{tenant.Header: "other.test"}), 204, refused},
		{"preflight naming the instance", "OPTIONS", "/rest/v1/Book",
			merge(preflight(app), map[string]string{tenant.Header: c.domain}), 204, allowed},
		{"OPTIONS that is no preflight", "OPTIONS", "/rest/v1/Book", nil, 204, map[string]string{"Allow": "GET, POST, PUT, DELETE, OPTIONS"}},
		{"a request from an allowed origin", "GET", "/rest/v1/Book", map[string]string{"Origin": app, tenant.Header: c.domain, "authorization": c.token}, 200,
			map[string]string{"Access-Control-Allow-Origin": app, "Access-Control-Expose-Headers": "retry-after, x-request-id", "Vary": "Origin"}},
		{"its failure is readable", "GET", "/rest/v1/Book", map[string]string{"Origin": app, tenant.Header: c.domain, "authorization": "wrong"}, 401,
			map[string]string{"Access-Control-Allow-Origin": app, "Access-Control-Expose-Headers": "retry-after, x-request-id", "Vary": "Origin"}},
		{"a request from another origin", "GET", "/rest/v1/Book", map[string]string{"Origin": evil, tenant.Header: c.domain, "authorization": c.token}, 200,
			map[string]string{"Vary": "Origin"}},
		{"a request to an instance that allows no origin", "GET", "/rest/v1/Book", map[string]string{"Origin": app, tenant.Header: "other.test", "authorization": other}, 200,
			map[string]string{"Vary": "Origin"}},
		{"a request without Origin", "GET", "/rest/v1/Book", map[string]string{tenant.Header: c.domain, "authorization": c.token}, 200, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := c.env.DoRaw(tc.method, tc.path, tc.headers, nil)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.status, body)
			}
			if diff := cmp.Diff(tc.want, cors(res)); diff != "" {
				t.Errorf("CORS headers (-want +got):\n%s", diff)
			}
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
