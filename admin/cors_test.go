package admin_test

import (
	"testing"

	"github.com/corehq/core/server/servertest"
)

// TestInstanceCORS sets an instance's CORS policy through the admin API:
// on creation, by PATCH (a partial change keeps it), and refuses what is
// not an origin.
func TestInstanceCORS(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	origins := func(o ...any) map[string]any {
		if o == nil {
			o = []any{}
		}
		return map[string]any{"cors": map[string]any{"allowedOrigins": o}}
	}
	run(t, env, []step{
		{name: "create without", method: "POST", path: "/instances", body: map[string]any{"domain": "a.test", "app": "bookstore", "release": "v1"},
			status: 201, check: wantFields(origins())},
		{name: "create with", method: "POST", path: "/instances", status: 201, check: wantFields(origins("https://app.example.com")),
			body: map[string]any{"domain": "b.test", "app": "bookstore", "release": "v1", "cors": map[string]any{"allowedOrigins": []any{"https://app.example.com"}}}},
		{name: "patch", method: "PATCH", path: "/instances/a.test", body: origins("http://localhost:3000", "*"),
			status: 200, check: wantFields(origins("http://localhost:3000", "*"))},
		{name: "other settings keep it", method: "PATCH", path: "/instances/a.test", body: map[string]any{"anonymousRequests": true},
			status: 200, check: wantFields(origins("http://localhost:3000", "*"))},
		{name: "read back", method: "GET", path: "/instances/a.test", status: 200, check: wantFields(origins("http://localhost:3000", "*"))},
		{name: "a path is no origin", method: "PATCH", path: "/instances/a.test", body: origins("https://app.example.com/"),
			status: 400, code: "BAD_REQUEST", message: `"https://app.example.com/" is not an origin`},
		{name: "upper case", method: "PATCH", path: "/instances/a.test", body: origins("https://App.example.com"),
			status: 400, code: "BAD_REQUEST", message: "is not an origin"},
		{name: "no scheme", method: "POST", path: "/instances", status: 400, code: "BAD_REQUEST", message: "is not an origin",
			body: map[string]any{"domain": "c.test", "app": "bookstore", "release": "v1", "cors": map[string]any{"allowedOrigins": []any{"app.example.com"}}}},
		{name: "refused patch changed nothing", method: "GET", path: "/instances/a.test", status: 200, check: wantFields(origins("http://localhost:3000", "*"))},
		{name: "clear", method: "PATCH", path: "/instances/a.test", body: origins(), status: 200, check: wantFields(origins())},
	})
	if inst, ok := env.Directory.Lookup("b.test"); !ok || !inst.Settings.CORS.Allows("https://app.example.com") || inst.Settings.CORS.Allows("https://evil.example") {
		t.Errorf("b.test's CORS policy in the directory: %+v", inst)
	}
}
