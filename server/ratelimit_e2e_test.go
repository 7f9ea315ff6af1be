package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestRateLimit: an instance's requests through every door (GraphQL,
// REST, webhooks) take from one budget; past it they answer 429
// RATE_LIMITED with Retry-After, other instances go on, and the setting
// can be changed or removed at once. Instances without a setting get the
// server's default. (The rates are one request per 1,000 s, so that no
// token comes back however slow the machine is.)
func TestRateLimit(t *testing.T) {
	t.Parallel()
	cfg := gql.DefaultConfig()
	cfg.RateLimit = &tenant.RateLimit{RequestsPerSecond: 0.001, Burst: 2}
	env := servertest.Start(t, servertest.WithGQLConfig(cfg))
	env.PutRelease("notes", "v1", "type Note { text: String }")
	limited := env.CreateInstance("limited.test", "notes", "v1", tenant.Settings{AnonymousRequests: true,
		RateLimit: &tenant.RateLimit{RequestsPerSecond: 0.001, Burst: 3}})
	free := env.CreateInstance("free.test", "notes", "v1", tenant.Settings{RateLimit: &tenant.RateLimit{RequestsPerSecond: 1000}})
	defaulted := env.CreateInstance("default.test", "notes", "v1", tenant.Settings{})

	type door struct {
		name string
		send func(domain, token string) (*http.Response, []byte)
	}
	doors := []door{
		{"graphql", func(domain, token string) (*http.Response, []byte) {
			return env.DoRaw(http.MethodPost, "/graphql", map[string]string{tenant.Header: domain, "authorization": token},
				map[string]any{"query": `{ find(type: Note, arcql: "*") { edges { cursor } } }`})
		}},
		{"rest", func(domain, token string) (*http.Response, []byte) {
			return env.DoRaw(http.MethodGet, "/rest/v1/Note", map[string]string{tenant.Header: domain, "authorization": token}, nil)
		}},
		{"webhook", func(domain, _ string) (*http.Response, []byte) {
			return env.DoRaw(http.MethodPost, "/webhook/"+domain+"/nope", nil, map[string]any{})
		}},
	}
	limitedAt := func(res *http.Response, raw []byte) bool {
		return res.StatusCode == http.StatusTooManyRequests && strings.Contains(string(raw), "RATE_LIMITED")
	}
	// Three requests, one through each door: the burst.
	for _, d := range doors {
		if res, raw := d.send("limited.test", limited); limitedAt(res, raw) || res.StatusCode >= 500 {
			t.Fatalf("%s within the burst: %d %s", d.name, res.StatusCode, raw)
		}
	}
	for _, d := range doors {
		res, raw := d.send("limited.test", limited)
		secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		if !limitedAt(res, raw) || secs < 1 || !strings.Contains(string(raw), "instance limited.test is over its rate limit of 0.001 requests per second (burst 3)") {
			t.Errorf("%s past the burst: %d Retry-After %q %s, want 429 RATE_LIMITED naming the limit", d.name, res.StatusCode, res.Header.Get("Retry-After"), raw)
		}
	}
	// Other instances are not held up.
	for range 5 {
		if res, raw := doors[0].send("free.test", free); res.StatusCode != http.StatusOK {
			t.Fatalf("another instance: %d %s", res.StatusCode, raw)
		}
	}
	// The server's default for an instance without a setting: 2.
	for i := range 3 {
		res, raw := doors[1].send("default.test", defaulted)
		if got := limitedAt(res, raw); got != (i == 2) {
			t.Errorf("default-limited request %d: %d %s", i+1, res.StatusCode, raw)
		}
	}
	// A bad setting is refused, naming it; null removes the limit.
	if st, body := env.Admin(http.MethodPatch, "/instances/limited.test", map[string]any{"rateLimit": map[string]any{"requestsPerSecond": 0}}); st != http.StatusBadRequest ||
		!strings.Contains(jsonText(body), "rateLimit.requestsPerSecond must be above 0") {
		t.Errorf("a zero rate: %d %s", st, jsonText(body))
	}
	if st, body := env.Admin(http.MethodPatch, "/instances/limited.test", map[string]any{"rateLimit": map[string]any{"requestsPerSecond": 1000, "burst": 5000}}); st != http.StatusOK {
		t.Fatalf("raising the limit: %d %s", st, jsonText(body))
	}
	if res, raw := doors[0].send("limited.test", limited); res.StatusCode != http.StatusOK {
		t.Errorf("after raising the limit: %d %s", res.StatusCode, raw)
	}
	if st, body := env.Admin(http.MethodPatch, "/instances/default.test", map[string]any{"rateLimit": map[string]any{"requestsPerSecond": 1000}}); st != http.StatusOK {
		t.Fatalf("setting a limit over the default: %d %s", st, jsonText(body))
	}
	if res, raw := doors[1].send("default.test", defaulted); res.StatusCode != http.StatusOK {
		t.Errorf("an own limit over the server's default: %d %s", res.StatusCode, raw)
	}
	if st, body := env.Admin(http.MethodPatch, "/instances/default.test", map[string]any{"rateLimit": nil}); st != http.StatusOK || body["rateLimit"] != nil {
		t.Fatalf("removing the limit: %d %s", st, jsonText(body))
	}
	// Back on the server's default, with a new bucket (a changed limit
	// starts full).
	for i := range 3 {
		res, raw := doors[1].send("default.test", defaulted)
		if got := limitedAt(res, raw); got != (i == 2) {
			t.Errorf("back on the default, request %d: %d %s", i+1, res.StatusCode, raw)
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
