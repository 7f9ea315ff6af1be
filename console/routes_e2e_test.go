package console_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/console"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestConsoleRoutesServeNoData asks the real server for every console
// route without credentials, with a wrong token and with the admin token:
// each answers the same embedded bytes (the static shell and its modules),
// never an instance's data, a token or a cookie; other methods and paths
// under /console/ are refused; and /admin/v1 still refuses a request
// without the admin token, the console notwithstanding.
func TestConsoleRoutesServeNoData(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("secretapp", "v1", `type Secret { word: String }`)
	token := env.CreateInstance("secret.local", "secretapp", "v1", tenant.Settings{})
	if status, body := env.GraphQL("secret.local", token, `mutation { upsert(values: {Secret: [{word: "swordfish"}]}) { id } }`, nil); status != 200 || body["errors"] != nil {
		t.Fatalf("seeding: %d %v", status, body)
	}
	secrets := []string{"secretapp", "secret.local", "swordfish", token, servertest.AdminToken}

	names := console.New().Names()
	if len(names) < 4 {
		t.Fatalf("the console serves %d files: %q", len(names), names)
	}
	for _, name := range names {
		path := console.Prefix + name
		t.Run(path, func(t *testing.T) {
			res, anonymous := env.DoRaw(http.MethodGet, path, nil, nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("without credentials: %d, want 200", res.StatusCode)
			}
			if c := res.Header.Get("Set-Cookie"); c != "" {
				t.Errorf("sets a cookie: %q", c)
			}
			for _, s := range secrets {
				if bytes.Contains(anonymous, []byte(s)) {
					t.Errorf("serves %q", s)
				}
			}
			for _, hdr := range []map[string]string{
				{"authorization": "wrong"},
				env.AdminHeaders(),
				{"authorization": token, tenant.Header: "secret.local"},
			} {
				res, body := env.DoRaw(http.MethodGet, path, hdr, nil)
				if res.StatusCode != http.StatusOK || !bytes.Equal(body, anonymous) {
					t.Errorf("with %v: %d and other bytes than without credentials", keys(hdr), res.StatusCode)
				}
			}
			for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
				res, _ := env.DoRaw(m, path, env.AdminHeaders(), `{}`)
				if res.StatusCode != http.StatusMethodNotAllowed {
					t.Errorf("%s: %d, want 405", m, res.StatusCode)
				}
			}
		})
	}
	for _, path := range []string{"/console/admin/v1/apps", "/console/graphql", "/console/rest/v1/Secret", "/console/api/apps", "/console/index.json"} {
		res, body := env.DoRaw(http.MethodGet, path, env.AdminHeaders(), nil)
		if res.StatusCode != http.StatusNotFound || strings.Contains(string(body), "swordfish") {
			t.Errorf("GET %s with the admin token: %d, want 404", path, res.StatusCode)
		}
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
	}{
		{"no token", nil},
		{"wrong token", map[string]string{"authorization": "not-the-admin-token"}},
		{"instance token", map[string]string{"authorization": token}},
	} {
		for _, path := range []string{"/admin/v1/apps", "/admin/v1/instances", "/admin/v1/apps/secretapp/releases/v1"} {
			status, body := env.Do(http.MethodGet, path, tc.headers, nil)
			if status != http.StatusUnauthorized || strings.Contains(dump(body), "secret.local") {
				t.Errorf("%s: GET %s answered %d, want 401", tc.name, path, status)
			}
		}
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func dump(m map[string]any) string {
	b, _ := json.Marshal(m) // a decoded JSON object encodes again
	return string(b)
}
