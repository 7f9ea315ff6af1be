package server_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/server"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestTrustedProxies: failed logins count per client address. Behind a
// trusted proxy that address is the one the proxy forwards
// (X-Forwarded-For or Forwarded), so clients behind one load balancer do
// not lock each other out; from a peer that is not trusted, forwarded
// headers are ignored, so a client cannot escape its own count by making
// addresses up.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	const loginDoc = `query($u: String!, $p: String!) { login(username: $u, password: $p) { errorCode } }`
	setup := func(trusted string) (*servertest.Env, func(n int, headers map[string]string) int) {
		prefixes, err := server.ParseTrustedProxies(trusted)
		if err != nil {
			t.Fatal(err)
		}
		// Small hashing parameters: the test is about the throttle, and
		// its count must fit in one minute's window.
		env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.TrustedProxies = prefixes }),
			servertest.WithArgon2(auth.Argon2{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}))
		env.PutRelease("notes", "v1", "type Note { text: String }")
		env.CreateInstance("notes.test", "notes", "v1", tenant.Settings{})
		// The throttle's windows are aligned to the clock: start at one's
		// start, so that none ends mid-count.
		now := env.Accounts.Now()
		env.Accounts.Shift(now.Truncate(time.Minute).Add(time.Minute).Sub(now))
		login := func(n int, headers map[string]string) int {
			h := map[string]string{tenant.Header: "notes.test"}
			for k, v := range headers {
				h[k] = v
			}
			res, raw := env.DoRaw(http.MethodPost, "/graphql", h, map[string]any{"query": loginDoc,
				"variables": map[string]any{"u": fmt.Sprintf("nobody%d", n), "p": "a wrong password"}})
			if res.StatusCode == http.StatusOK && !strings.Contains(string(raw), "INVALID_CREDENTIALS") {
				t.Fatalf("login %d: %s", n, raw)
			}
			return res.StatusCode
		}
		return env, login
	}

	t.Run("behind a trusted proxy", func(t *testing.T) {
		_, login := setup("127.0.0.1/32, ::1")
		a := map[string]string{"X-Forwarded-For": "203.0.113.7"}
		for i := range 10 {
			if st := login(i, a); st != http.StatusOK {
				t.Fatalf("failure %d from 203.0.113.7: %d", i+1, st)
			}
		}
		if st := login(10, a); st != http.StatusTooManyRequests {
			t.Errorf("the 11th failure from 203.0.113.7: %d, want 429", st)
		}
		// A client's own entry left of the proxy's is not believed.
		if st := login(11, map[string]string{"X-Forwarded-For": "198.51.100.1, 203.0.113.7"}); st != http.StatusTooManyRequests {
			t.Errorf("203.0.113.7 claiming to forward 198.51.100.1: %d, want 429", st)
		}
		for _, other := range []map[string]string{
			{"X-Forwarded-For": "203.0.113.8"},
			{"Forwarded": `for="[2001:db8::7]:4711";proto=https`},
		} {
			if st := login(12, other); st != http.StatusOK {
				t.Errorf("another client %v: %d, want 200 (its own count)", other, st)
			}
		}
	})

	t.Run("from a peer that is not trusted", func(t *testing.T) {
		_, login := setup("10.0.0.0/8")
		for i := range 10 {
			if st := login(i, map[string]string{"X-Forwarded-For": netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}).String()}); st != http.StatusOK {
				t.Fatalf("failure %d: %d", i+1, st)
			}
		}
		if st := login(10, map[string]string{"X-Forwarded-For": "203.0.113.200"}); st != http.StatusTooManyRequests {
			t.Errorf("the 11th failure from the same peer under a made-up address: %d, want 429", st)
		}
	})
}
