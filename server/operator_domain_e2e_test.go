package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/oci"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestDomainHeaderOnOperatorRoutes: the admin API and the image registry
// are the operator's, not an instance's: core-domain, once or twice (with
// different values), changes nothing there: the same status and the same
// body as without it, and a write acts on what its path and body name,
// never on the header's instance.
//
// hostile checklist 53: core-domain on the admin and registry routes
// (and two core-domain headers there).
func TestDomainHeaderOnOperatorRoutes(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t, servertest.WithImages(oci.DefaultConfig(), nil))
	env.PutRelease("bookstore", "v1", bookstoreSDL)
	env.CreateInstance("a.test", "bookstore", "v1", tenant.Settings{})
	env.CreateInstance("b.test", "bookstore", "v1", tenant.Settings{})

	send := func(method, path, body string, basic bool, domains ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, env.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("content-type", "application/json")
		}
		if basic {
			req.SetBasicAuth(oci.User, servertest.AdminToken)
		} else {
			req.Header.Set("authorization", servertest.AdminToken)
		}
		for _, d := range domains {
			req.Header.Add(tenant.Header, d)
		}
		res, out := servertest.Send(t, env.Client, req)
		return res.StatusCode, string(out)
	}
	headerSets := [][]string{{"a.test"}, {"b.test"}, {"a.test", "b.test"}, {"a.test, b.test"}, {"nowhere.test"}, {"../x"}}
	reads := []struct {
		name, path string
		basic      bool
	}{
		{"admin: the instances", "/admin/v1/instances", false},
		{"admin: one instance", "/admin/v1/instances/a.test", false},
		{"admin: the apps", "/admin/v1/apps", false},
		{"registry: the API check", "/v2/", true},
		{"registry: the catalog", "/v2/_catalog", true},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			wantStatus, wantBody := send("GET", r.path, "", r.basic)
			if wantStatus != 200 {
				t.Fatalf("GET %s without core-domain: %d %s", r.path, wantStatus, wantBody)
			}
			for _, domains := range headerSets {
				status, body := send("GET", r.path, "", r.basic, domains...)
				if status != wantStatus || body != wantBody {
					t.Errorf("GET %s with core-domain %q: %d %s; without it: %d %s", r.path, domains, status, body, wantStatus, wantBody)
				}
			}
		})
	}

	// A write acts on what the request names: the header's instances are
	// left as they were.
	before := map[string]string{}
	for _, d := range []string{"a.test", "b.test"} {
		_, before[d] = send("GET", "/admin/v1/instances/"+d, "", false)
	}
	status, body := send("POST", "/admin/v1/instances", `{"domain":"c.test","app":"bookstore","release":"v1"}`, false, "a.test", "b.test")
	if status != http.StatusCreated || !strings.Contains(body, `"c.test"`) {
		t.Fatalf("creating c.test with two core-domain headers: %d %s, want 201", status, body)
	}
	status, body = send("DELETE", "/admin/v1/instances/c.test", "", false, "a.test")
	if status >= 300 {
		t.Fatalf("deleting c.test with core-domain a.test: %d %s", status, body)
	}
	for _, d := range []string{"a.test", "b.test"} {
		if _, after := send("GET", "/admin/v1/instances/"+d, "", false); !bytes.Equal([]byte(after), []byte(before[d])) {
			t.Errorf("%s changed: %s, was %s", d, after, before[d])
		}
	}
	if status, _ := send("GET", "/admin/v1/instances/c.test", "", false); status != http.StatusNotFound {
		t.Errorf("c.test after its deletion: %d, want 404", status)
	}
}
