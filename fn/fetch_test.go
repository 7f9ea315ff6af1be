package fn

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/internal/netguard"
)

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"127.0.0.1", false},
		{"127.1.2.3", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false},
		{"10.0.0.1", false},
		{"172.16.5.4", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"fe80::1", false},
		{"fd00::1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"100.64.0.1", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"255.255.255.255", false},
		{"198.18.0.1", false},
		{"64:ff9b::7f00:1", false},
		{"2002:7f00:1::", false},
		{"::ffff:10.0.0.1", false},
	} {
		err := netguard.Public(netip.MustParseAddr(tc.addr))
		if (err == nil) != tc.public {
			t.Errorf("netguard.Public(%s) = %v, want public=%v", tc.addr, err, tc.public)
		}
	}
}

func TestHostAllowed(t *testing.T) {
	t.Parallel()
	allow := []string{"api.example.com", "*.stripe.com", "HOOKS.Example.org.", "[2001:db8::1]"}
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"https://api.example.com/x", true},
		{"https://API.EXAMPLE.COM:8443/x", true},
		{"https://api.example.com./x", true},
		{"https://example.com/", false},
		{"https://evil-api.example.com/", false},
		{"https://api.example.com.evil.net/", false},
		{"https://a.stripe.com/", true},
		{"https://a.b.stripe.com/", true},
		{"https://stripe.com/", false},
		{"https://notstripe.com/", false},
		{"https://hooks.example.org/", true},
		{"http://[2001:db8::1]:80/", true},
		{"http:///nohost", false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostAllowed(allow, u); got != tc.want {
			t.Errorf("hostAllowed(%s) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// TestFetch exercises fetch against a loopback server, with the address
// check widened to loopback for this test only: the allow-list,
// redirects, bounds and the response object are what is checked here.
// TestNoHostAccess checks that loopback is refused by default.
func TestFetch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) {
		inline(c) // the test widens permit, which is this process's
		c.Fetch.MaxResponseBytes = 1000
		c.Fetch.MaxCalls = 3
	})
	e.js.permit = func(a netip.Addr) error {
		if a.IsLoopback() {
			return nil
		}
		return netguard.Public(a)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		w.Header().Add("x-multi", "a")
		w.Header().Add("x-multi", "b")
		fmt.Fprintf(w, `{"method":%q,"auth":%q,"body":%q}`, r.Method, r.Header.Get("authorization"), readAll(r))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, strings.Repeat("x", 2000)) })
	mux.HandleFunc("/teapot", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	// Redirects: to an allowed host (the same server) and to one that is
	// not on the list ("localhost" names the same server).
	mux.HandleFunc("/to-json", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/json", http.StatusFound) })
	mux.HandleFunc("/to-other", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+u.Port()+"/json", http.StatusFound)
	})

	e.publish("fetch", "v1", `exports.main = async (input) => {
		try {
			const res = await fetch(input.args.url, input.args.opts ? JSON.parse(input.args.opts) : undefined);
			const out = { status: res.status, ok: res.ok, redirected: res.redirected, type: res.headers.get('Content-Type'), multi: res.headers.get('x-multi'), missing: res.headers.get('nope') };
			out.body = res.status === 200 && out.type === 'application/json' ? await res.json() : await res.text();
			return out;
		} catch (e) { return { failed: e.message }; }
	};`)
	e.publish("many", "v1", `exports.main = async (input) => {
		const out = [];
		for (let i = 0; i < 4; i++) {
			try { await fetch(input.args.url); out.push('ok'); } catch (e) { out.push(e.message); }
		}
		return out;
	};`)
	policy := FetchPolicy{Enabled: true, AllowHosts: []string{"127.0.0.1"}}
	tests := []struct {
		name string
		path string
		opts string
		want map[string]any
	}{
		{"GET JSON", "/json", "", map[string]any{"status": 200.0, "ok": true, "redirected": false, "type": "application/json", "multi": "a, b", "missing": nil,
			"body": map[string]any{"method": "GET", "auth": "", "body": ""}}},
		{"POST with headers and body", "/json", `{"method":"post","headers":{"Authorization":"Bearer t"},"body":"{\"a\":1}"}`,
			map[string]any{"status": 200.0, "ok": true, "redirected": false, "type": "application/json", "multi": "a, b", "missing": nil,
				"body": map[string]any{"method": "POST", "auth": "Bearer t", "body": `{"a":1}`}}},
		{"status passed on", "/teapot", "", map[string]any{"status": 418.0, "ok": false, "redirected": false, "type": nil, "multi": nil, "missing": nil, "body": ""}},
		{"redirect to an allowed host", "/to-json", "", map[string]any{"status": 200.0, "ok": true, "redirected": true, "type": "application/json", "multi": "a, b", "missing": nil,
			"body": map[string]any{"method": "GET", "auth": "", "body": ""}}},
		{"redirect manual", "/to-json", `{"redirect":"manual"}`, map[string]any{"status": 302.0, "ok": false, "redirected": false, "type": "text/html; charset=utf-8", "multi": nil, "missing": nil, "body": "<a href=\"/json\">Found</a>.\n\n"}},
		{"redirect to a host not on the list", "/to-other", "", map[string]any{"failed": "fetch failed: redirect to host localhost, which is not on the instance's fetch allow-list"}},
		{"response over the bound", "/big", "", map[string]any{"failed": "fetch failed: the response body is larger than 1000 bytes"}},
		{"method refused", "/json", `{"method":"CONNECT"}`, map[string]any{"failed": `fetch failed: method "CONNECT" is not supported`}},
		{"header injection refused", "/json", `{"headers":{"x":"a\r\nb: c"}}`, map[string]any{"failed": `fetch failed: header "x" holds a line break`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{"url": srv.URL + tc.path}
			if tc.opts != "" {
				args["opts"] = tc.opts
			}
			res, err := e.invoke(Invocation{Name: "fetch", Version: "v1", Args: args, Fetch: policy})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, res.Value); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	t.Run("testdata/functions/async-fetch", func(t *testing.T) {
		t.Parallel()
		e.publishFiles("async-fetch", "v1", testdataFiles(t, "async-fetch"))
		res, err := e.invoke(Invocation{Name: "async-fetch", Version: "v1", Args: map[string]any{"url": srv.URL + "/json"}, Fetch: policy})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"status": 200.0, "ok": true, "type": "application/json", "body": `{"method":"GET","auth":"","body":""}`}
		if d := cmp.Diff(want, res.Value); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
	t.Run("fetches per call are bounded", func(t *testing.T) {
		t.Parallel()
		res, err := e.invoke(Invocation{Name: "many", Version: "v1", Args: map[string]any{"url": srv.URL + "/teapot"}, Fetch: policy})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]any{"ok", "ok", "ok", "fetch failed: a call may start at most 3 fetches"}, res.Value); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
}

func readAll(r *http.Request) string {
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
