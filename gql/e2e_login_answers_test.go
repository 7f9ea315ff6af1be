package gql_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

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
