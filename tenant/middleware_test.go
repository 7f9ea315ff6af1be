package tenant_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

func TestMiddleware(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	env.CreateInstance("shop.test", "bookstore", "v1", tenant.Settings{})
	query := map[string]any{"query": `{ find(type: Book, arcql: "*") { edges { cursor } } }`}

	for _, tc := range []struct {
		name    string
		method  string
		headers map[string]string
		status  int
		code    string
		message string // a part of the message
	}{
		{"no header", http.MethodPost, nil, 400, "BAD_REQUEST", "core-domain header is required"},
		{"no header, GET", http.MethodGet, nil, 400, "BAD_REQUEST", "core-domain header is required"},
		{"unknown domain", http.MethodPost, map[string]string{"core-domain": "nope.test"}, 404, "UNKNOWN_DOMAIN", `"nope.test"`},
		{"overlong domain", http.MethodPost, map[string]string{"core-domain": strings.Repeat("a", 300)}, 404, "UNKNOWN_DOMAIN", "longer than a host name"},
		// A known domain reaches the caller's check: find needs a token.
		{"known domain, no token", http.MethodPost, map[string]string{"core-domain": "shop.test"}, 401, "UNAUTHENTICATED", "authorization"},
		{"known domain in other case", http.MethodPost, map[string]string{"core-domain": "SHOP.test"}, 401, "UNAUTHENTICATED", "authorization"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			path := "/graphql"
			if tc.method == http.MethodPost {
				body = query
			} else {
				path += "?query=%7B__typename%7D"
			}
			status, got := env.Do(tc.method, path, tc.headers, body)
			msg, code := servertest.FirstError(got)
			if status != tc.status || code != tc.code || !strings.Contains(msg, tc.message) {
				t.Errorf("%d %s %q, want %d %s containing %q", status, code, msg, tc.status, tc.code, tc.message)
			}
		})
	}
}
