package gql_test

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
	"github.com/google/go-cmp/cmp"
)

// TestTokenInURLIgnored: a valid instance or session token given only in
// the URL, under any usual name, authenticates nothing: the answer is the
// one a junk value gets, 401 on /graphql as for no token. (MainCheckingLogs then finds none
// of these tokens in any log line: servertest notes URL values named
// token as secrets.)
// On /rest/v1 such a parameter is one the route does not take: 400 naming
// the parameter, not its value, as for any junk value.
//
// hostile checklist 15: token supplied as ?token= in the URL → ignored.
func TestTokenInURLIgnored(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.newAccount("ada", "", "correct horse battery")
	session := c.login("ada", "correct horse battery").token
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b1"}, "title": "Secret"}}})
	h := map[string]string{tenant.Header: c.domain}
	for _, token := range []string{c.token, session} {
		for _, name := range []string{"token", "access_token", "authorization", "sessionToken", "core-token"} {
			q := url.Values{name: {token}}
			for _, target := range []string{
				"/graphql?" + url.Values{"query": {`{ get(type: Book, id: "b1") { ... on Book { title } } }`}, name: {token}}.Encode(),
				"/rest/v1/Book/b1?" + q.Encode(),
				"/rest/v1/Book?" + q.Encode(),
				"/rest/v1/aggregate/Book?" + q.Encode(),
			} {
				res, body := c.env.DoRaw(http.MethodGet, target, h, nil)
				junk, junkBody := c.env.DoRaw(http.MethodGet, strings.ReplaceAll(target, url.QueryEscape(token), "junk"), h, nil)
				door := strings.SplitN(target, "?", 2)[0]
				if res.StatusCode == 200 || strings.Contains(string(body), "Secret") || strings.Contains(string(body), `"data":{`) {
					t.Errorf("GET %s with the token only in ?%s=: %d %s; want a refusal", door, name, res.StatusCode, body)
				}
				// Ignored: the answer is the one a junk value gets. /graphql
				// takes no such parameter and answers 401; /rest/v1 refuses
				// the parameter it does not take (400, naming it, not its
				// value) before it would answer 401.
				if res.StatusCode != junk.StatusCode || string(body) != string(junkBody) {
					t.Errorf("GET %s with the token in ?%s=: %d %s; a junk value gets %d %s", door, name, res.StatusCode, body, junk.StatusCode, junkBody)
				}
				if want := map[bool]int{true: 401, false: 400}[door == "/graphql"]; res.StatusCode != want {
					t.Errorf("GET %s with the token only in ?%s=: %d, want %d", door, name, res.StatusCode, want)
				}
				if strings.Contains(string(body), token) {
					t.Errorf("GET %s: the answer echoes the token", target)
				}
			}
			// A POST with the token in the URL and none in the header.
			res, body := c.env.DoRaw(http.MethodPost, "/graphql?"+q.Encode(), h, map[string]any{"query": `{ get(type: Book, id: "b1") { ... on Book { title } } }`})
			if res.StatusCode != 401 || strings.Contains(string(body), "Secret") {
				t.Errorf("POST /graphql?%s=…: %d %s; want 401", name, res.StatusCode, body)
			}
		}
	}
}

// TestWrongInstanceTokens: wrong instance tokens of the real token's
// length and of other lengths get one answer, byte for byte, on /graphql
// and /rest/v1, and no error body echoes a token, right or wrong. The
// medians of the two refusals' latencies are logged, not asserted (the
// compare is of SHA-256 digests, in constant time: auth.TokenMatches).
//
// hostile checklist 16: wrong value of equal length and of different
// length → same 401; not visible via error bodies.
func TestWrongInstanceTokens(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.newAccount("ada", "", "correct horse battery")
	ada := c.login("ada", "correct horse battery")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	wrong := map[string]string{
		"same length, last character":  flip(c.token, len(c.token)-1),
		"same length, first character": flip(c.token, 0),
		"one character longer":         c.token + "A",
		"one character shorter":        c.token[:len(c.token)-1],
		"half":                         c.token[:len(c.token)/2],
		"twice":                        c.token + c.token,
		"one character":                "A",
		"Bearer, same length":          "Bearer " + flip(c.token, 3),
	}
	doors := []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/graphql", map[string]any{"query": "{ __typename }"}},
		{http.MethodGet, "/rest/v1/Book", nil},
		{http.MethodGet, "/rest/v1/Book/b1", nil},
	}
	for _, door := range doors {
		var first string
		var firstStatus int
		for _, name := range slices.Sorted(maps.Keys(wrong)) {
			token := wrong[name]
			res, body := c.env.DoRaw(door.method, door.path, map[string]string{tenant.Header: c.domain, "authorization": token}, door.body)
			if res.StatusCode != 401 || !strings.Contains(string(body), "UNAUTHENTICATED") {
				t.Errorf("%s %s, %s: %d %s; want 401 UNAUTHENTICATED", door.method, door.path, name, res.StatusCode, body)
			}
			for _, secret := range []string{c.token, strings.TrimPrefix(token, "Bearer "), ada.token} {
				if len(secret) > 8 && strings.Contains(string(body), secret) {
					t.Errorf("%s %s, %s: the body echoes a token", door.method, door.path, name)
				}
			}
			if first == "" {
				first, firstStatus = string(body), res.StatusCode
			} else if diff := cmp.Diff(first, string(body)); diff != "" || res.StatusCode != firstStatus {
				t.Errorf("%s %s, %s: %d, the body differs from another wrong token's %d (-other +this):\n%s", door.method, door.path, name, res.StatusCode, firstStatus, diff)
			}
		}
	}

	// Other failures with a token at hand: their bodies do not echo it.
	c.env.CreateInstance("other.test", "bookstore", "v1", tenant.Settings{})
	for _, tc := range []struct {
		name, domain, token, query string
	}{
		{"a session on another instance", "other.test", ada.token, "{ __typename }"},
		{"the instance token on another instance", "other.test", c.token, "{ __typename }"},
		{"a bad filter", c.domain, c.token, `{ find(type: Book, arcql: "title = ") { edges { cursor } } }`},
		{"an unknown field", c.domain, ada.token, "{ nope }"},
		{"a syntax error", c.domain, c.token, "{ get(type: Book, id: "},
		{"an unknown domain", "nowhere.test", c.token, "{ __typename }"},
		{"the instance token as a session token", c.domain, "cs1." + c.token, "{ __typename }"},
		{"a session token as the instance token", c.domain, afterPrefix(ada.token), "{ __typename }"},
	} {
		_, body := c.env.DoRaw(http.MethodPost, "/graphql", map[string]string{tenant.Header: tc.domain, "authorization": tc.token}, map[string]any{"query": tc.query})
		if !strings.Contains(string(body), "errors") {
			t.Errorf("%s: no error: %s", tc.name, body)
		}
		for _, secret := range []string{c.token, ada.token} {
			if strings.Contains(string(body), secret) {
				t.Errorf("%s: the error body echoes a token: %s", tc.name, body)
			}
		}
	}

	// Latency of the two refusals, logged only: a busy machine makes any
	// bound flaky.
	median := func(token string) time.Duration {
		var d []time.Duration
		for range 200 {
			start := time.Now()
			res, _ := c.env.DoRaw(http.MethodPost, "/graphql", map[string]string{tenant.Header: c.domain, "authorization": token}, map[string]any{"query": "{ __typename }"})
			d = append(d, time.Since(start))
			if res.StatusCode != 401 {
				t.Fatalf("a wrong token answered %d", res.StatusCode)
			}
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	same, other := median(wrong["same length, last character"]), median(wrong["half"])
	t.Logf("median latency of a refused instance token over 200 requests: same length %v, half length %v", same, other)
}

// TestNoDebugOnPublicListener: the public listener serves no profiler
// and no expvar, with or without a token, with or without core-domain.
//
// hostile checklist 16: pprof/expvar not served on the public listener;
// the token not visible via /debug/*.
func TestNoDebugOnPublicListener(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	for _, target := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=2",
		"/debug/pprof/profile?seconds=1", "/debug/pprof/trace?seconds=1", "/debug/vars", "/debug/", "/debug", "/metrics"} {
		for _, h := range []map[string]string{
			nil,
			{"authorization": servertest.AdminToken},
			{tenant.Header: c.domain, "authorization": c.token},
		} {
			res, body := c.env.DoRaw(http.MethodGet, target, h, nil)
			if res.StatusCode != 404 {
				t.Errorf("GET %s (headers %v): %d, want 404", target, slices.Sorted(maps.Keys(h)), res.StatusCode)
			}
			// The answer of any path that does not exist, naming the path.
			p, _, _ := strings.Cut(target, "?")
			want := `{"errors":[{"message":"no such path: GET ` + p + `","extensions":{"code":"NOT_FOUND"}}]}`
			if strings.TrimSpace(string(body)) != want {
				t.Errorf("GET %s: %s, want %s", target, body, want)
			}
		}
	}
}

// afterPrefix is a session token without its format prefix ("cs2."), the
// rest of it sent as if it were an instance token.
func afterPrefix(token string) string {
	_, rest, _ := strings.Cut(token, ".")
	return rest
}

// loginForm is one way to log in: it sends a name and a password and
// returns the status and the raw body.
type loginForm struct {
	name string
	send func(c *client, user, password string) (int, string)
}

// loginForms are every login door: GraphQL by username and by e-mail,
// REST POST /login both ways, and the GET forms of the samples.
func loginForms() []loginForm {
	gql := func(doc, arg string) func(c *client, user, password string) (int, string) {
		return func(c *client, user, password string) (int, string) {
			res, raw := c.env.DoRaw(http.MethodPost, "/graphql", map[string]string{tenant.Header: c.domain},
				map[string]any{"query": doc, "variables": map[string]any{arg: user, "p": password}})
			return res.StatusCode, string(raw)
		}
	}
	post := func(field string) func(c *client, user, password string) (int, string) {
		return func(c *client, user, password string) (int, string) {
			res, raw := c.env.DoRaw(http.MethodPost, "/rest/v1/login", map[string]string{tenant.Header: c.domain}, map[string]any{field: user, "password": password})
			return res.StatusCode, string(raw)
		}
	}
	get := func(fn, field string) func(c *client, user, password string) (int, string) {
		return func(c *client, user, password string) (int, string) {
			q := url.Values{field: {user}, "password": {password}}
			res, raw := c.env.DoRaw(http.MethodGet, "/rest/v1/fn/query/"+fn+"?"+q.Encode(), map[string]string{tenant.Header: c.domain}, nil)
			return res.StatusCode, string(raw)
		}
	}
	return []loginForm{
		{"GraphQL login", gql(loginDoc, "u")},
		{"GraphQL loginByEmail", gql(loginByEmailDoc, "e")},
		{"POST /rest/v1/login username", post("username")},
		{"POST /rest/v1/login email", post("email")},
		{"GET /rest/v1/fn/query/login", get("login", "username")},
		{"GET /rest/v1/fn/query/loginByEmail", get("loginByEmail", "email")},
	}
}

// TestUnknownUserAnswersAsWrongPassword: through every login door, an
// unknown user, a known user with a wrong password, and a disabled
// account with a wrong password get the same status and the same body,
// byte for byte. (The clock is moved past the throttle's windows between
// tries: this is not a test of the throttle.)
//
// hostile checklist 8: unknown user vs known user + wrong password →
// identical status and body.
func TestUnknownUserAnswersAsWrongPassword(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.newAccount("ada", "ada@example.com", "correct horse battery")
	off := c.newAccount("off", "off@example.com", "correct horse battery")
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": off}, "enabled": false}}})
	for _, form := range loginForms() {
		t.Run(form.name, func(t *testing.T) {
			user := func(name string) string {
				if strings.Contains(form.name, "mail") {
					return name + "@example.com"
				}
				return name
			}
			answers := map[string][2]any{}
			for who, try := range map[string][2]string{
				"unknown user":                     {user("nobody"), "correct horse battery"},
				"wrong password":                   {user("ada"), "wrong horse battery"},
				"wrong password, one letter":       {user("ada"), "correct horse batterY"},
				"disabled account, wrong password": {user("off"), "wrong horse battery"},
				"unknown user, case variant":       {user("Nobody"), "correct horse battery"},
			} {
				status, body := form.send(c, try[0], try[1])
				answers[who] = [2]any{status, body}
				c.env.Accounts.Shift(16 * time.Minute)
			}
			want := answers["unknown user"]
			if !strings.Contains(want[1].(string), "INVALID_CREDENTIALS") {
				t.Fatalf("an unknown user: %v %s; want INVALID_CREDENTIALS", want[0], want[1])
			}
			for who, got := range answers {
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s answers unlike an unknown user (-unknown +%s):\n%s", who, who, diff)
				}
			}
			// The right password logs in through this door (the form works).
			if status, body := form.send(c, user("ada"), "correct horse battery"); status != 200 || !strings.Contains(body, `"sessionToken":"cs`) {
				t.Errorf("the right password: %d %s", status, body)
			}
		})
	}
}

// BenchmarkLoginUnknownVsWrongPassword measures the latency of a login
// of an unknown user and of a known user with a wrong password,
// interleaved, over b.N of each, through POST /rest/v1/login, and reports
// their medians and how much they differ. It asserts nothing: a busy
// machine makes any bound flaky. Run it as
//
//	go test ./gql/ -run '^$' -bench LoginUnknownVsWrong -benchtime 200x
//
// hostile checklist 8: median latency of unknown user vs wrong password
// over 200 samples each (measured, not asserted).
func BenchmarkLoginUnknownVsWrongPassword(b *testing.B) {
	env := servertest.Start(b)
	env.PutRelease("bookstore", "v1", bookstoreSDL(b))
	c := &client{t: b, env: env, domain: "books.test", token: env.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})}
	c.newAccount("ada", "", "correct horse battery")
	send := loginForms()[2].send
	var unknown, wrong []time.Duration
	b.ResetTimer()
	for i := range b.N {
		tries := [][2]string{{"nobody", "correct horse battery"}, {"ada", "wrong horse battery"}}
		if i%2 == 1 { // alternate which goes first
			slices.Reverse(tries)
		}
		for _, try := range tries {
			start := time.Now()
			status, _ := send(c, try[0], try[1])
			d := time.Since(start)
			if status != 401 {
				b.Fatalf("login %s: %d, want 401", try[0], status)
			}
			if try[0] == "nobody" {
				unknown = append(unknown, d)
			} else {
				wrong = append(wrong, d)
			}
			b.StopTimer()
			c.env.Accounts.Shift(16 * time.Minute) // past the throttle's windows
			b.StartTimer()
		}
	}
	b.StopTimer()
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	mu, mw := median(unknown), median(wrong)
	b.ReportMetric(float64(mu.Microseconds()), "unknown-median-µs")
	b.ReportMetric(float64(mw.Microseconds()), "wrong-median-µs")
	b.ReportMetric(100*float64(mu-mw)/float64(mw), "diff-%")
}
