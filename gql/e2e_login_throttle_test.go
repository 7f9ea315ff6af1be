package gql_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/server"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// loginFrom is one login through /graphql from the client address from
// (a test server that trusts loopback as its proxy reads it from
// X-Forwarded-For). It returns the status, the Retry-After header and the
// body.
func (c *client) loginFrom(from, username, password string) (int, string, map[string]any) {
	c.t.Helper()
	res, raw := c.env.DoRaw(http.MethodPost, "/graphql", map[string]string{tenant.Header: c.domain, "X-Forwarded-For": from},
		map[string]any{"query": loginDoc, "variables": map[string]any{"u": username, "p": password}})
	return res.StatusCode, res.Header.Get("Retry-After"), decode(c.t, raw)
}

// postLogin is loginFrom for another goroutine than the test's: it
// returns the status only, 0 when the request failed.
func (c *client) postLogin(from, username, password string) int {
	body, _ := json.Marshal(map[string]any{"query": loginDoc, "variables": map[string]any{"u": username, "p": password}})
	req, err := http.NewRequest(http.MethodPost, c.env.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set(tenant.Header, c.domain)
	req.Header.Set("X-Forwarded-For", from)
	res, err := c.env.Client.Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// attacker is the i-th address of an attacker (TEST-NET-3).
func attacker(i int) string { return netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}).String() }

// behindProxy trusts loopback as a proxy, so that a test picks its
// client addresses with X-Forwarded-For.
func behindProxy(t *testing.T) servertest.Option {
	t.Helper()
	loopback, err := server.ParseTrustedProxies("127.0.0.1/32, ::1")
	if err != nil {
		t.Fatal(err)
	}
	return servertest.WithConfig(func(c *server.Config) { c.TrustedProxies = loopback })
}

// TestLoginThrottleDistributed: a guessing attack on one account from many
// addresses, through the real server, with the throttle's counts in
// memory and in the store (on the run's store: bolt, then MongoDB).
//
// hostile checklist 9: 100 wrong passwords from 20 addresses (5 each,
// under every per-address bound) and the 101st is throttled: 429 with
// Retry-After, for the right password too, from every address that
// failed; meanwhile the owner logs in from an address that never failed,
// and keeps doing so while fresh addresses go on guessing (each guess
// doubling the back-off). After the back-off the right password works from
// an attacker's address too: no lockout an attacker can make last.
//
// hostile checklist 8: the same attack on a name that has no account
// gets the same answers, Retry-After included.
func TestLoginThrottleDistributed(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		name := "in memory"
		// Small hashing parameters: the test is about the throttle.
		opts := []servertest.Option{behindProxy(t), servertest.WithArgon2(auth.Argon2{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})}
		if shared {
			name = "in the store"
			opts = append(opts, servertest.WithSharedLoginThrottle())
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newBookstore(t, opts...)
			const right, wrong = "correct horse battery", "wrong horse battery"
			c.newAccount("ada", "", right)

			// The test's windows start now: a 15-minute window passing
			// mid-test would forget which addresses failed.
			startWindow(c.env.Accounts, 15*time.Minute)

			// 100 failures for ada from 20 addresses, and 100 for nobody
			// from 20 others, 5 from each: under every per-address bound.
			for i := range 100 {
				for _, f := range []struct{ user, from string }{{"ada", attacker(i % 20)}, {"nobody", attacker(20 + i%20)}} {
					if st, _, body := c.loginFrom(f.from, f.user, wrong); st != 200 || path(body, "data", "login", "errorCode") != "INVALID_CREDENTIALS" {
						t.Fatalf("%s: failure %d: %d %s", f.user, i+1, st, dump(body))
					}
				}
			}

			// throttled checks a refusal: 429 RATE_LIMITED, Retry-After
			// of at most maxRetry seconds and more than half of it (the
			// back-off doubles; the clock runs on while the test does).
			throttled := func(what, from, user, pw string, maxRetry int) map[string]any {
				t.Helper()
				st, retry, body := c.loginFrom(from, user, pw)
				_, code := servertest.FirstError(body)
				secs, _ := strconv.Atoi(retry)
				if st != http.StatusTooManyRequests || code != "RATE_LIMITED" || secs > maxRetry || secs <= maxRetry/2 ||
					path(body, "errors", 0, "extensions", "retryAfter") != float64(secs) {
					t.Errorf("%s: %d Retry-After %q %s; want 429 RATE_LIMITED, Retry-After in (%d, %d]", what, st, retry, dump(body), maxRetry/2, maxRetry)
				}
				return body
			}
			loggedIn := func(what, from string) {
				t.Helper()
				st, _, body := c.loginFrom(from, "ada", right)
				if token, _ := path(body, "data", "login", "sessionToken").(string); st != 200 || token == "" {
					t.Errorf("%s: %d %s; want a session", what, st, dump(body))
				}
			}

			// The 101st wrong password, and the right one, from addresses
			// that failed: refused for the back-off's first minute.
			ada := throttled("the 101st wrong password from an attacker's address", attacker(0), "ada", wrong, 60)
			throttled("the right password from an attacker's address", attacker(7), "ada", right, 60)
			nobody := throttled("the 101st wrong password for a name without account", attacker(20), "nobody", wrong, 60)
			if diff := cmp.Diff(seconds.ReplaceAllString(dump(ada), "N"), seconds.ReplaceAllString(dump(nobody), "N")); diff != "" {
				t.Errorf("throttled: ada and nobody differ (-ada +nobody):\n%s", diff)
			}
			// The same through REST.
			res, raw := c.env.DoRaw(http.MethodPost, "/rest/v1/login", map[string]string{tenant.Header: c.domain, "X-Forwarded-For": attacker(3)},
				map[string]any{"username": "ada", "password": right})
			if secs, _ := strconv.Atoi(res.Header.Get("Retry-After")); res.StatusCode != http.StatusTooManyRequests || secs <= 30 || secs > 60 {
				t.Errorf("POST /rest/v1/login from an attacker's address: %d Retry-After %q %s", res.StatusCode, res.Header.Get("Retry-After"), raw)
			}

			// The owner, from an address that never failed.
			loggedIn("the owner from a clean address, after 100 failures", "198.51.100.7")

			// Fresh addresses go on guessing: their wrong passwords are
			// answered (no oracle either way) and double the back-off.
			for i, maxRetry := range []int{120, 240, 480, 900, 900} {
				from := attacker(100 + i)
				if st, _, body := c.loginFrom(from, "ada", wrong); st != 200 || path(body, "data", "login", "errorCode") != "INVALID_CREDENTIALS" {
					t.Fatalf("a fresh address's guess: %d %s", st, dump(body))
				}
				throttled("the fresh address's second guess", from, "ada", wrong, maxRetry)
				throttled("an earlier attacker address", attacker(1), "ada", right, maxRetry)
			}
			// Ten guesses at once from one fresh address: one is answered,
			// the others are refused (the first counts while in flight).
			statuses := make([]int, 10)
			var wg sync.WaitGroup
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = c.postLogin(attacker(150), "ada", wrong)
				}()
			}
			wg.Wait()
			answered, refused := 0, 0
			for _, st := range statuses {
				switch st {
				case http.StatusOK:
					answered++
				case http.StatusTooManyRequests:
					refused++
				}
			}
			if answered != 1 || refused != 9 {
				t.Errorf("10 guesses at once from one fresh address: statuses %v; want one 200 and nine 429", statuses)
			}

			loggedIn("the owner from another clean address, under attack", "198.51.100.8")
			loggedIn("the owner again from the first", "198.51.100.7")

			// After the back-off (15 minutes, a new 15-minute window too),
			// the right password works from an attacker's address.
			c.env.Accounts.Shift(15*time.Minute + time.Second)
			loggedIn("the right password from an attacker's address after the back-off", attacker(1))
		})
	}
}

// startWindow moves the throttle's clock to the start of its next
// window of span (its windows are aligned to the clock), so that a test
// has the whole window to itself whatever the time it runs at.
func startWindow(a *auth.Accounts, span time.Duration) {
	now := a.Now()
	a.Shift(now.Truncate(span).Add(span).Sub(now))
}

// seconds matches the numbers of a throttled answer (its wait).
var seconds = regexp.MustCompile(`[0-9]+`)

// decode reads a JSON object.
func decode(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, raw)
	}
	return m
}

// TestLoginThrottleAcrossServers: two servers on one store (on MongoDB,
// each with its own connection, as two cored processes behind a load
// balancer; on bolt, one store) share the counts: an attack split between
// them is throttled on both, from the addresses that failed on the other
// one too, and the owner logs in on either from a clean address.
// hostile checklist 9, across processes.
func TestLoginThrottleAcrossServers(t *testing.T) {
	t.Parallel()
	var a, b store.Store
	switch servertest.Kind() {
	case servertest.KindMongo:
		stores := mongotest.Shared(t, 2)
		a, b = stores[0], stores[1]
	default:
		a = bolttest.Open(t)
		b = a
	}
	cheap := servertest.WithArgon2(auth.Argon2{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
	one := servertest.Start(t, servertest.WithStore(a), servertest.WithSharedLoginThrottle(), behindProxy(t), cheap)
	two := servertest.Start(t, servertest.WithStore(b), servertest.WithSharedLoginThrottle(), behindProxy(t), cheap)
	one.PutRelease("bookstore", "v1", bookstoreSDL(t))
	token := one.CreateInstance("books.test", "bookstore", "v1", tenant.Settings{})
	if _, err := two.Directory.Refresh(context.Background()); err != nil { // what its watch does every interval
		t.Fatal(err)
	}
	servers := []*client{{t: t, env: one, domain: "books.test", token: token}, {t: t, env: two, domain: "books.test", token: token}}
	const right, wrong = "correct horse battery", "wrong horse battery"
	servers[0].newAccount("ada", "", right)
	for _, c := range servers {
		startWindow(c.env.Accounts, 15*time.Minute)
	}

	// 100 failures from 20 addresses: the even ones on the first server,
	// the odd ones on the second.
	for i := range 100 {
		if st, _, body := servers[i%2].loginFrom(attacker(i%20), "ada", wrong); st != 200 || path(body, "data", "login", "errorCode") != "INVALID_CREDENTIALS" {
			t.Fatalf("failure %d: %d %s", i+1, st, dump(body))
		}
	}
	for i, c := range servers {
		other := attacker(1 - i) // failed on the other server only
		st, retry, body := c.loginFrom(other, "ada", right)
		if secs, _ := strconv.Atoi(retry); st != http.StatusTooManyRequests || secs <= 30 || secs > 60 {
			t.Errorf("server %d, the right password from an address that failed on the other: %d Retry-After %q %s; want 429, Retry-After in (30, 60]",
				i+1, st, retry, dump(body))
		}
		st, _, body = c.loginFrom("198.51.100.7", "ada", right)
		if token, _ := path(body, "data", "login", "sessionToken").(string); st != 200 || token == "" {
			t.Errorf("server %d, the owner from a clean address: %d %s", i+1, st, dump(body))
		}
	}
}

// TestLoginThrottleIPv6: the addresses of one IPv6 /64 are one client
// address: failures from ten of them, on ten names, reach the limit of an
// address (10 per minute) for an eleventh, while another /64 goes on.
func TestLoginThrottleIPv6(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, behindProxy(t), servertest.WithArgon2(auth.Argon2{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}))
	startWindow(c.env.Accounts, time.Minute)
	for i := range 10 {
		from := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 7, 15: byte(i + 1)}).String()
		if st, _, body := c.loginFrom(from, "nobody"+strconv.Itoa(i), "a wrong password"); st != 200 || path(body, "data", "login", "errorCode") != "INVALID_CREDENTIALS" {
			t.Fatalf("failure %d from %s: %d %s", i+1, from, st, dump(body))
		}
	}
	if st, retry, body := c.loginFrom("2001:db8:0:7:ffff::1", "someone", "a wrong password"); st != http.StatusTooManyRequests || retry == "" {
		t.Errorf("another address of the same /64: %d Retry-After %q %s; want 429", st, retry, dump(body))
	}
	if st, _, body := c.loginFrom("2001:db8:0:8::1", "someone", "a wrong password"); st != 200 {
		t.Errorf("an address of another /64: %d %s; want 200", st, dump(body))
	}
}

// TestConcurrentLoginsFromOneAddress: 40 logins with the right password
// sent at once from one address (an office behind one address, a back end
// logging its users in) all get a session: attempts in flight hold the
// others back a few at a time, they do not refuse them. The same number
// of wrong passwords at once from another address: the address's limit of
// them is tried, the rest refused.
func TestConcurrentLoginsFromOneAddress(t *testing.T) {
	t.Parallel()
	c := newBookstore(t, behindProxy(t), servertest.WithArgon2(auth.Argon2{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}))
	const right, wrong = "correct horse battery", "wrong horse battery"
	c.newAccount("ada", "", right)
	startWindow(c.env.Accounts, 15*time.Minute)

	for _, tc := range []struct {
		from, password string
		want           map[int]int // status → how many
	}{
		{"198.51.100.20", right, map[int]int{http.StatusOK: 40}},
		{attacker(60), wrong, map[int]int{http.StatusOK: 10, http.StatusTooManyRequests: 30}},
	} {
		statuses := make([]int, 40)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = c.postLogin(tc.from, "ada", tc.password)
			}()
		}
		wg.Wait()
		got := map[int]int{}
		for _, st := range statuses {
			got[st]++
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("40 logins at once from %s (right password: %v): statuses (-want +got):\n%s", tc.from, tc.password == right, diff)
		}
	}
	// Each right password made a session; the owner still logs in.
	if st, _, body := c.loginFrom("198.51.100.20", "ada", right); st != 200 || path(body, "data", "login", "sessionToken") == nil {
		t.Errorf("the owner after the logins at once: %d %s", st, dump(body))
	}
}
