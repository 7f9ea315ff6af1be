package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/server"
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

// TestBadTokensKeepToTheirAddress: requests with wrong tokens and
// anonymous logins take from a bucket of their client address, never from
// the instance's: fifty of them from one address leave the instance
// token's and a valid session's next requests served, even from that same
// address, and another address still logs in; the address past its own
// bucket answers 429 RATE_LIMITED naming it, with Retry-After. Work the
// instance opens to anonymous callers still takes from the instance's
// bucket, so its rate bounds what it serves. (Rates of one request per
// 1,000 s: no token comes back however slow the machine is.)
func TestBadTokensKeepToTheirAddress(t *testing.T) {
	t.Parallel()
	prefixes, err := server.ParseTrustedProxies("127.0.0.1/32, ::1")
	if err != nil {
		t.Fatal(err)
	}
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.TrustedProxies = prefixes }))
	env.PutRelease("notes", "v1", "type Note { text: String }")
	const burst = 3
	limit := &tenant.RateLimit{RequestsPerSecond: 0.001, Burst: burst}
	token := env.CreateInstance("limited.test", "notes", "v1", tenant.Settings{RateLimit: limit})
	elsewhere := env.CreateInstance("elsewhere.test", "notes", "v1", tenant.Settings{})
	const (
		findDoc  = `{ find(type: Note, arcql: "*") { edges { cursor } } }`
		loginDoc = `query($u: String!, $p: String!) { login(username: $u, password: $p) { sessionToken errorCode } }`
	)
	send := func(domain, from, authorization string, req map[string]any) (*http.Response, string) {
		t.Helper()
		h := map[string]string{tenant.Header: domain, "X-Forwarded-For": from}
		if authorization != "" {
			h["authorization"] = authorization
		}
		res, raw := env.DoRaw(http.MethodPost, "/graphql", h, req)
		return res, string(raw)
	}
	login := func(domain, from, authorization, user, password string) (*http.Response, string) {
		return send(domain, from, authorization, map[string]any{"query": loginDoc, "variables": map[string]any{"u": user, "p": password}})
	}
	sessionOf := func(raw string) string {
		var body struct {
			Data struct {
				Login struct{ SessionToken string }
			}
		}
		_ = json.Unmarshal([]byte(raw), &body)
		return body.Data.Login.SessionToken
	}
	newAccount := `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`
	account := map[string]any{"v": map[string]any{"username": "ada", "password": map[string]any{"value": "correct horse battery"}}}
	// The instance's bucket: one request of its burst here.
	if res, raw := send("limited.test", "192.0.2.1", token, map[string]any{"query": newAccount, "variables": account}); res.StatusCode != http.StatusOK {
		t.Fatalf("creating ada: %d %s", res.StatusCode, raw)
	}
	if res, raw := send("elsewhere.test", "192.0.2.1", elsewhere, map[string]any{"query": newAccount, "variables": account}); res.StatusCode != http.StatusOK {
		t.Fatalf("creating ada elsewhere: %d %s", res.StatusCode, raw)
	}
	_, raw := login("elsewhere.test", "192.0.2.1", "", "ada", "correct horse battery")
	foreign := sessionOf(raw) // a real session token, of another instance
	if foreign == "" {
		t.Fatalf("logging in elsewhere: %s", raw)
	}

	// hostile checklist 49: bad tokens do not use up the instance's own
	// users' rate. Fifty requests from one address: junk tokens, another
	// instance's session, a forged session, anonymous logins with a wrong
	// password and with a junk token.
	const attacker = "198.51.100.7"
	attacks := []func() (*http.Response, string){
		func() (*http.Response, string) {
			return send("limited.test", attacker, "Bearer junk", map[string]any{"query": findDoc})
		},
		func() (*http.Response, string) {
			return send("limited.test", attacker, foreign, map[string]any{"query": findDoc})
		},
		func() (*http.Response, string) {
			return send("limited.test", attacker, foreign[:len(foreign)-4]+"AAAA", map[string]any{"query": findDoc})
		},
		func() (*http.Response, string) { return login("limited.test", attacker, "", "ada", "a wrong password") },
		func() (*http.Response, string) {
			return login("limited.test", attacker, "Bearer junk", "ada", "a wrong password")
		},
	}
	refused := 0
	for i := range 50 {
		res, raw := attacks[i%len(attacks)]()
		switch {
		case res.StatusCode >= 500:
			t.Fatalf("attack %d: %d %s", i+1, res.StatusCode, raw)
		case i < burst:
			// Within the address's own burst: answered for what it is.
			if res.StatusCode == http.StatusTooManyRequests {
				t.Errorf("attack %d within the address's burst: %d %s", i+1, res.StatusCode, raw)
			}
		default:
			secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			if res.StatusCode != http.StatusTooManyRequests || secs < 1 || !strings.Contains(raw, "RATE_LIMITED") ||
				!strings.Contains(raw, "too many requests without a valid token from "+attacker+" to instance limited.test") {
				t.Errorf("attack %d past the address's burst: %d Retry-After %q %s, want 429 RATE_LIMITED naming the address", i+1, res.StatusCode, res.Header.Get("Retry-After"), raw)
			}
			refused++
		}
	}
	if refused != 50-burst {
		t.Errorf("%d attacks refused, want %d", refused, 50-burst)
	}

	// Another address logs in: its own bucket.
	res, raw := login("limited.test", "203.0.113.5", "", "ada", "correct horse battery")
	session := sessionOf(raw)
	if res.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("ada logging in from her own address: %d %s", res.StatusCode, raw)
	}
	// The instance's bucket is as the attack found it: the session and
	// the instance token are served, even from the attacker's address.
	if res, raw := send("limited.test", attacker, session, map[string]any{"query": findDoc}); res.StatusCode != http.StatusOK {
		t.Errorf("ada's session after the attack: %d %s", res.StatusCode, raw)
	}
	if res, raw := send("limited.test", "192.0.2.1", token, map[string]any{"query": findDoc}); res.StatusCode != http.StatusOK {
		t.Errorf("the instance token after the attack: %d %s", res.StatusCode, raw)
	}
	// That was the instance's burst: its own limit still holds.
	if res, raw := send("limited.test", "192.0.2.1", token, map[string]any{"query": findDoc}); res.StatusCode != http.StatusTooManyRequests ||
		!strings.Contains(raw, "instance limited.test is over its rate limit") {
		t.Errorf("the instance token past the instance's burst: %d %s, want 429 naming the instance", res.StatusCode, raw)
	}

	// Anonymous work an instance allows takes from the instance's bucket:
	// three addresses, one find each, on a burst of two.
	env.CreateInstance("open.test", "notes", "v1", tenant.Settings{AnonymousRequests: true, RateLimit: &tenant.RateLimit{RequestsPerSecond: 0.001, Burst: 2}})
	for i, from := range []string{"203.0.113.10", "203.0.113.11", "203.0.113.12"} {
		res, raw := send("open.test", from, "", map[string]any{"query": findDoc})
		if limited := res.StatusCode == http.StatusTooManyRequests && strings.Contains(raw, "instance open.test is over its rate limit"); limited != (i == 2) {
			t.Errorf("anonymous find %d from %s: %d %s", i+1, from, res.StatusCode, raw)
		}
	}
}
