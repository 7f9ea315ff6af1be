package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestWebhookFloodKeepsOtherDoorsOpen: anonymous requests flooding one
// webhook of a rate-limited instance answer 429 RATE_LIMITED naming that
// webhook once past its share (half the instance's burst), while the
// instance's other webhooks and its API keep being served from the half
// left. (The rate is one request per 1,000 s, so that no token comes
// back however slow the machine is; outcomes only, no latency.)
//
// hostile checklist 44: anonymous traffic to one tenant's webhook → 429
// for that endpoint once past its limit, without starving the instance's
// other doors.
func TestWebhookFloodKeepsOtherDoorsOpen(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("notes", "v1", "type Note { text: String }")
	token := env.CreateInstance("flood.test", "notes", "v1", tenant.Settings{AnonymousRequests: true,
		RateLimit: &tenant.RateLimit{RequestsPerSecond: 0.001, Burst: 10}})
	other := env.CreateInstance("calm.test", "notes", "v1", tenant.Settings{AnonymousRequests: true,
		RateLimit: &tenant.RateLimit{RequestsPerSecond: 0.001, Burst: 10}})
	hook := func(domain, name string) (*http.Response, string) {
		res, raw := env.DoRaw(http.MethodPost, "/webhook/"+domain+"/"+name, nil, map[string]any{})
		return res, string(raw)
	}
	limited := func(res *http.Response, raw string) bool {
		return res.StatusCode == http.StatusTooManyRequests && strings.Contains(raw, "RATE_LIMITED")
	}
	// The flood: half the burst is served, then the webhook is refused.
	served := 0
	for i := range 20 {
		res, raw := hook("flood.test", "stripe")
		if !limited(res, raw) {
			served++
			continue
		}
		secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		if secs < 1 || !strings.Contains(raw, "for webhook stripe, which may use half of it") {
			t.Errorf("request %d of the flood: %d Retry-After %q %s, want 429 naming the webhook", i+1, res.StatusCode, res.Header.Get("Retry-After"), raw)
		}
	}
	if served != 5 {
		t.Errorf("the flooded webhook was served %d times, want 5 (half the burst of 10)", served)
	}
	// The instance's other doors are still served.
	if res, raw := hook("flood.test", "github"); limited(res, raw) {
		t.Errorf("another webhook of the instance: %d %s", res.StatusCode, raw)
	}
	if status, body := env.GraphQL("flood.test", token, `{ find(type: Note, arcql: "*") { edges { cursor } } }`, nil); status != http.StatusOK {
		t.Errorf("the instance's API during the flood: %d %v", status, body)
	}
	// A 5 KB name has a bucket of its own too, and its refusal quotes it short.
	long := strings.Repeat("x", 5<<10)
	for range 5 {
		hook("flood.test", long)
	}
	if res, raw := hook("flood.test", long); !limited(res, raw) || len(raw) > 1024 {
		t.Errorf("a 5 KB webhook name past its share: %d %d bytes, want a short 429", res.StatusCode, len(raw))
	}
	// By now the instance's own budget is spent: its whole-instance limit
	// still holds for every door.
	if status, body := env.GraphQL("flood.test", token, `{ find(type: Note, arcql: "*") { edges { cursor } } }`, nil); status != http.StatusTooManyRequests {
		t.Errorf("the API after the instance's burst was used: %d %v, want 429", status, body)
	}
	// Another instance is not affected.
	if res, raw := hook("calm.test", "stripe"); limited(res, raw) {
		t.Errorf("another instance's webhook: %d %s", res.StatusCode, raw)
	}
	if status, _ := env.GraphQL("calm.test", other, `{ find(type: Note, arcql: "*") { edges { cursor } } }`, nil); status != http.StatusOK {
		t.Errorf("another instance's API: %d", status)
	}
}
