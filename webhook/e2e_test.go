package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/server"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
	"github.com/corehq/core/untrusted"
)

func TestMain(m *testing.M) { servertest.MainCheckingLogs(m) }

// inline are the small functions of these tests, published as single
// .js sources.
var inline = map[string]string{
	"mirror": `exports.main = (input, cb) => { console.log('mirror ran'); cb({status: 200, headers: {'content-type': 'application/json'}, body: JSON.parse(input.args.payload)}, null); };`,
	"respond": `exports.main = (input, cb) => {
		const mode = JSON.parse(input.args.payload).url.queryParams.mode;
		if (mode === 'redirect') return cb({status: 302, headers: {Location: 'https://example.com/done'}}, null);
		if (mode === 'custom') return cb({status: 418, headers: {'X-Custom': 'yes', 'Connection': 'close'}, body: 'short and stout'}, null);
		if (mode === 'json') return cb({status: 201, body: {ok: true, n: [1, 2]}}, null);
		if (mode === 'badstatus') return cb({status: 9999}, null);
		if (mode === 'badheader') return cb({headers: {'X-A': 'a\r\nSet-Cookie: x=1'}}, null);
		if (mode === 'fracstatus') return cb({status: 200.5}, null);
		if (mode === 'strstatus') return cb({status: '200'}, null);
		if (mode === 'numheader') return cb({headers: {'X-N': 1}}, null);
		if (mode === 'error') return cb(null, {code: 'NOPE', message: 'secret internals'});
		if (mode === 'page') return cb({headers: {'Content-Type': 'text/html', 'Content-Security-Policy': "script-src 'unsafe-inline'",
			'Service-Worker-Allowed': '/', 'Set-Cookie': 'tenant=1; Path=/; Domain=127.0.0.1', 'Clear-Site-Data': '"*"'},
			body: '<script>sessionStorage.getItem("core.console.adminToken")</script>'}, null);
		if (mode === 'jsredirect') return cb({status: 302, headers: {Location: 'javascript:alert(document.domain)', 'X-Custom': 'yes'}}, null);
		if (mode === 'dataredirect') return cb({status: 302, headers: {Location: 'data:text/html,<script>alert(1)</script>'}}, null);
		throw new Error('secret internals at line 7');
	};`,
	"spin":   `exports.main = () => { while (true) {} };`,
	"proto":  `exports.main = (input, cb) => { const before = ({}).polluted; Object.prototype.polluted = 'yes'; cb({before: before === undefined ? null : before}, null); };`,
	"refuse": `exports.main = (input, cb) => cb(null, {code: 'NOPE', message: 'refused: ' + input.args.reason});`,
	"escape": `exports.main = async (input, cb) => {
		const out = {};
		try { require('fs'); out.fs = 'loaded'; } catch (e) { out.fs = 'refused'; }
		out.process = typeof process;
		try { await fetch(input.args.name); out.fetch = 'reached'; } catch (e) { out.fetch = 'refused'; }
		cb(out, null);
	};`,
}

// hooks is a server with the webhook schema deployed and its functions
// published.
type hooks struct {
	t     *testing.T
	env   *servertest.Env
	token string
}

func start(t *testing.T, settings tenant.Settings, opts ...servertest.Option) *hooks {
	t.Helper()
	// A function's deadline far beyond what a call takes on a busy
	// machine: only the tests that want a time-out (a looping function)
	// set a shorter one, and they assert the outcome, never the time.
	cfg := fn.DefaultConfig()
	cfg.Timeout = time.Minute
	env := servertest.Start(t, append([]servertest.Option{servertest.WithFunctionConfig(cfg)}, opts...)...)
	sdl := testfiles.Read(t, "e2e", "webhooks.graphql")
	env.PutRelease("hooks", "v1", sdl)
	h := &hooks{t: t, env: env, token: env.CreateInstance("hooks.test", "hooks", "v1", settings)}
	publish := func(name string, src []byte) {
		res, body := env.DoRaw("PUT", "/admin/v1/apps/hooks/functions/"+name+"/v1", env.AdminHeaders(), src)
		if res.StatusCode != 200 && res.StatusCode != 201 {
			t.Fatalf("publishing %s: %d %s", name, res.StatusCode, body)
		}
	}
	for name, src := range inline {
		publish(name, []byte(src))
	}
	for _, name := range []string{"echo", "stripe-store"} {
		src := []byte(testfiles.Read(t, "functions", name, "index.js"))
		publish(name, src)
	}
	// Webhooks saved with the instance token run as the instance's account.
	h.gql(`mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{"Webhook": []any{
		map[string]any{"name": "stripe", "query": map[string]any{"type": "Mutation", "field": "stripe"}},
		map[string]any{"name": "mirror", "query": map[string]any{"type": "Mutation", "field": "mirror"}},
		map[string]any{"name": "respond", "query": map[string]any{"type": "Mutation", "field": "respond", "selection": "status headers body"}},
		map[string]any{"name": "spin", "query": map[string]any{"type": "Mutation", "field": "spin"}},
		map[string]any{"name": "ghost", "query": map[string]any{"type": "Mutation", "field": "ghost"}},
	}}})
	return h
}

// gql runs a document with the instance token; it must succeed.
func (h *hooks) gql(query string, vars map[string]any) map[string]any {
	h.t.Helper()
	status, body := h.env.GraphQL("hooks.test", h.token, query, vars)
	if status != 200 || body["errors"] != nil {
		h.t.Fatalf("%s: %d %s", query, status, dump(body))
	}
	d, _ := body["data"].(map[string]any)
	return d
}

// hook sends a request to a webhook.
func (h *hooks) hook(method, name, query string, headers map[string]string, body string) (*http.Response, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.env.URL+"/webhook/hooks.test/"+name+query, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	if _, err := fmt.Fprint(&b, readAll(res)); err != nil {
		h.t.Fatal(err)
	}
	return res, b.String()
}

func readAll(res *http.Response) string {
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String()
		}
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func stripeSignature(secret, body string, at int64) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.%s", at, body)
	return fmt.Sprintf("t=%d,v1=%s", at, hex.EncodeToString(m.Sum(nil)))
}

func TestStripeWebhook(t *testing.T) {
	t.Parallel()
	h := start(t, tenant.Settings{AnonymousRequests: true, Env: map[string]string{"STRIPE_SECRET": "whsec_test"}})
	body := `{"id":"evt_1","type":"invoice.payment_failed","data":{"amount":4200}}`
	res, out := h.hook("POST", "stripe", "", map[string]string{"Stripe-Signature": stripeSignature("whsec_test", body, 1700000000), "Content-Type": "application/json"}, body)
	if res.StatusCode != 200 || !strings.Contains(out, `"received":true`) {
		t.Fatalf("good signature: %d %s", res.StatusCode, out)
	}
	tampered := strings.Replace(body, "4200", "1", 1)
	res, out = h.hook("POST", "stripe", "", map[string]string{"Stripe-Signature": stripeSignature("whsec_test", body, 1700000000)}, tampered)
	if res.StatusCode != 400 || !strings.Contains(out, "bad signature") {
		t.Errorf("tampered body: %d %s", res.StatusCode, out)
	}
	d := h.gql(`{ find(type: Payment, arcql: "*") { edges { node { ... on Payment { eventId kind amount core { createdBy } } } } } }`, nil)
	edges := d["find"].(map[string]any)["edges"].([]any)
	if len(edges) != 1 {
		t.Fatalf("payments stored: %s, want exactly the good one", dump(d))
	}
	got := edges[0].(map[string]any)["node"].(map[string]any)
	delete(got, "core")
	if diff := cmp.Diff(map[string]any{"eventId": "evt_1", "kind": "invoice.payment_failed", "amount": float64(4200)}, got); diff != "" {
		t.Errorf("stored payment (-want +got):\n%s", diff)
	}
}

func TestPayloadReachesTheFunction(t *testing.T) {
	t.Parallel()
	h := start(t, tenant.Settings{AnonymousRequests: true})
	port := strings.TrimPrefix(h.env.URL[strings.LastIndex(h.env.URL, ":"):], ":")
	cases := []struct {
		name, contentType, body string
		headers                 map[string]string
	}{
		{"GitHub-style JSON", "application/json", `{"action":"opened","issue":{"number":7,"title":"Ünïcödé  spaces"}}`,
			map[string]string{"X-GitHub-Event": "issues", "X-Hub-Signature-256": "sha256=abc"}},
		{"XML with an entity", "application/xml", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "expanded">]><note id="1">&e;</note>` + "\r\n",
			map[string]string{"X-Kind": "xml"}},
		{"form-encoded", "application/x-www-form-urlencoded", "a=1&b=two+words&c=%26%3D", map[string]string{"X-Kind": "form"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			headers := map[string]string{"Content-Type": tc.contentType}
			for k, v := range tc.headers {
				headers[k] = v
			}
			res, out := h.hook("POST", "mirror", "?x=1&y=2&y=3", headers, tc.body)
			if res.StatusCode != 200 {
				t.Fatalf("%d %s", res.StatusCode, out)
			}
			var p map[string]any
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if p["body"] != tc.body {
				t.Errorf("body = %q, want the exact bytes %q", p["body"], tc.body)
			}
			wantURL := map[string]any{"path": "/webhook/hooks.test/mirror", "host": "127.0.0.1", "port": json.Number(port),
				"queryParams": map[string]any{"x": "1", "y": []any{"2", "3"}}}
			gotURL := p["url"].(map[string]any)
			gotURL["port"] = json.Number(fmt.Sprint(gotURL["port"]))
			if diff := cmp.Diff(wantURL, gotURL); diff != "" {
				t.Errorf("url (-want +got):\n%s", diff)
			}
			hs := p["headers"].(map[string]any)
			if hs["content-type"] != tc.contentType || p["method"] != "POST" {
				t.Errorf("headers %v, method %v", hs, p["method"])
			}
			for k, v := range tc.headers {
				if hs[strings.ToLower(k)] != v {
					t.Errorf("header %s = %v, want %q", k, hs[strings.ToLower(k)], v)
				}
			}
		})
	}
	// Other methods reach the function too.
	if res, out := h.hook("PUT", "mirror", "", nil, "x"); res.StatusCode != 200 || !strings.Contains(out, `"method":"PUT"`) {
		t.Errorf("PUT: %d %s", res.StatusCode, out)
	}
}

func TestWebhookResponses(t *testing.T) {
	t.Parallel()
	h := start(t, tenant.Settings{AnonymousRequests: true})
	cases := []struct {
		mode        string
		status      int
		body        string
		headers     map[string]string
		contentType string
	}{
		{"redirect", 302, "", map[string]string{"Location": "https://example.com/done"}, ""},
		{"custom", 418, "short and stout", map[string]string{"X-Custom": "yes"}, "text/plain; charset=utf-8"},
		{"json", 201, `{"n":[1,2],"ok":true}`, nil, "application/json"},
		{"badstatus", 502, `{"errors":[{"message":"the webhook function's response is unusable: status 9999 is not an HTTP status (an integer from 100 to 599)","extensions":{"code":"BAD_GATEWAY"}}]}`, nil, ""},
		{"fracstatus", 502, `{"errors":[{"message":"the webhook function's response is unusable: status 200.5 is not an HTTP status (an integer from 100 to 599)","extensions":{"code":"BAD_GATEWAY"}}]}`, nil, ""},
		{"strstatus", 502, `{"errors":[{"message":"the webhook function's response is unusable: status \"200\" is not an HTTP status (an integer from 100 to 599)","extensions":{"code":"BAD_GATEWAY"}}]}`, nil, ""},
		{"badheader", 502, `{"errors":[{"message":"the webhook function's response is unusable: header \"X-A\" is not a valid header","extensions":{"code":"BAD_GATEWAY"}}]}`, nil, ""},
		{"numheader", 502, `{"errors":[{"message":"the webhook function's response is unusable: header \"X-N\" is 1: header values must be strings","extensions":{"code":"BAD_GATEWAY"}}]}`, nil, ""},
		{"error", 502, `{"errors":[{"message":"the webhook function failed; the instance's function log has the details","extensions":{"code":"FUNCTION_ERROR"}}]}`, nil, ""},
		// hostile checklist 41: a redirect to javascript: or data: is refused.
		{"jsredirect", 502, `{"errors":[{"message":"the webhook function's response is unusable: header \"Location\" has the scheme \"javascript\": a redirect must be an http or https URL","extensions":{"code":"BAD_GATEWAY"}}]}`,
			map[string]string{"Location": "", "X-Custom": ""}, ""},
		{"dataredirect", 502, `{"errors":[{"message":"the webhook function's response is unusable: header \"Location\" has the scheme \"data\": a redirect must be an http or https URL","extensions":{"code":"BAD_GATEWAY"}}]}`,
			map[string]string{"Location": ""}, ""},
		{"throw", 502, `{"errors":[{"message":"the webhook function failed; the instance's function log has the details","extensions":{"code":"FUNCTION_ERROR"}}]}`, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			res, out := h.hook("POST", "respond", "?mode="+tc.mode, nil, "{}")
			if res.StatusCode != tc.status || strings.TrimSpace(out) != tc.body {
				t.Errorf("%d %q, want %d %q", res.StatusCode, out, tc.status, tc.body)
			}
			for k, v := range tc.headers {
				if got := res.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if tc.contentType != "" && res.Header.Get("Content-Type") != tc.contentType {
				t.Errorf("content type %q, want %q", res.Header.Get("Content-Type"), tc.contentType)
			}
			if res.Header.Get("Connection") == "close" && tc.mode == "custom" {
				t.Error("a hop-by-hop header was passed on")
			}
		})
	}
}

// TestTenantContentIsSandboxed: whatever a function answers, its
// response cannot act as the service on the service's origin: it is
// sandboxed (an opaque origin running no script), never sniffed, sets no
// cookie beyond its own path and no service worker scope, and a browser
// fetching it as a service worker's script is refused before the
// function runs. The browser proof is console/origin_e2e_test.go.
//
// hostile checklist 41: Set-Cookie confined, redirects to javascript:
// refused (TestWebhookResponses). hostile checklist 51: the admin token
// is never reachable by a tenant's content (webhook responses on the
// same origin, service workers).
func TestTenantContentIsSandboxed(t *testing.T) {
	t.Parallel()
	h := start(t, tenant.Settings{AnonymousRequests: true})
	res, out := h.hook("GET", "respond", "?mode=page", nil, "")
	if res.StatusCode != 200 || !strings.Contains(out, "<script>") {
		t.Fatalf("the page: %d %s", res.StatusCode, out)
	}
	want := map[string][]string{
		"Content-Type":            {"text/html"},
		"Content-Security-Policy": {untrusted.Policy},
		"X-Content-Type-Options":  {"nosniff"},
		"Set-Cookie":              {"tenant=1; Path=/webhook/hooks.test/respond"},
		"Service-Worker-Allowed":  nil,
		"Clear-Site-Data":         nil,
	}
	for name, values := range want {
		if diff := cmp.Diff(values, res.Header.Values(name)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	// Every answer of a function carries the policy, JSON ones too.
	if res, _ := h.hook("POST", "respond", "?mode=json", nil, "{}"); res.Header.Get("Content-Security-Policy") != untrusted.Policy ||
		res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("a JSON answer: %v, want the sandbox policy and nosniff", res.Header)
	}

	// A service worker's script, as a browser asks for it: refused, and
	// the function does not run.
	ran := func() int {
		if err := h.env.Logs.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, body := h.env.Admin("GET", "/instances/hooks.test/logs", nil)
		entries, _ := body["entries"].([]any)
		return len(entries)
	}
	before := ran()
	for _, headers := range []map[string]string{{"Service-Worker": "script"}, {"Sec-Fetch-Dest": "serviceworker"}} {
		res, out := h.hook("GET", "mirror", "", headers, "")
		if res.StatusCode != 403 || !strings.Contains(out, `"code":"FORBIDDEN"`) || !strings.Contains(out, "service worker") {
			t.Errorf("%v: %d %s, want 403 FORBIDDEN naming the service worker", headers, res.StatusCode, out)
		}
	}
	if n := ran(); n != before {
		t.Errorf("the function ran %d times for service worker requests", n-before)
	}
	if res, _ := h.hook("GET", "mirror", "", map[string]string{"Sec-Fetch-Dest": "document"}, ""); res.StatusCode != 200 {
		t.Errorf("a page load: %d, want 200", res.StatusCode)
	}
}

func TestWebhookRefusals(t *testing.T) {
	t.Parallel()
	closed := start(t, tenant.Settings{})
	if res, out := closed.hook("POST", "mirror", "", nil, "{}"); res.StatusCode != 403 {
		t.Errorf("anonymous requests off: %d %s, want 403", res.StatusCode, out)
	}
	// ran counts the calls of mirror, which logs one line per call.
	ran := func(h *hooks) int {
		if err := h.env.Logs.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, body := h.env.Admin("GET", "/instances/hooks.test/logs", nil)
		entries, _ := body["entries"].([]any)
		return len(entries)
	}
	if n := ran(closed); n != 0 {
		t.Errorf("the function ran %d times though anonymous requests are off", n)
	}
	h := start(t, tenant.Settings{AnonymousRequests: true})
	res1, out1 := h.hook("POST", "nope", "", nil, "{}")
	req, _ := http.NewRequest("POST", h.env.URL+"/webhook/nowhere.test/mirror", strings.NewReader("{}"))
	res2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out2 := readAll(res2)
	res2.Body.Close()
	if res1.StatusCode != 404 || res2.StatusCode != 404 || out1 != out2 {
		t.Errorf("unknown webhook %d %q and unknown domain %d %q: want the same 404", res1.StatusCode, out1, res2.StatusCode, out2)
	}
	big := strings.Repeat("x", 1<<20+1)
	if res, _ := h.hook("POST", "mirror", "", nil, big); res.StatusCode != 413 {
		t.Errorf("body over the limit: %d, want 413", res.StatusCode)
	}
	if n := ran(h); n != 0 {
		t.Errorf("the function ran %d times for refused requests", n)
	}
	h.hook("POST", "mirror", "", nil, "{}")
	if n := ran(h); n != 1 {
		t.Errorf("after one call the function log holds %d lines, want 1", n)
	}
	// A Webhook must point at a (payload: WebhookPayload): WebhookResponse field.
	for _, target := range []map[string]any{
		{"type": "Mutation", "field": "notAHook"},
		{"type": "Mutation", "field": "missing"},
		{"type": "Subscription", "field": "stripe"},
		{"type": "Mutation", "field": "mirror", "selection": "status { __typename }"},
	} {
		status, body := h.env.GraphQL("hooks.test", h.token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
			map[string]any{"v": map[string]any{"Webhook": map[string]any{"name": "bad", "query": target}}})
		if body["errors"] == nil || !strings.Contains(dump(body), "BAD_REQUEST") {
			t.Errorf("saving a webhook on %v: %d %s, want BAD_REQUEST", target, status, dump(body))
		}
	}
}

func TestFunctionFields(t *testing.T) {
	t.Parallel()
	h := start(t, tenant.Settings{AnonymousRequests: true, Env: map[string]string{"GREETING": "hi", "OTHER": "hidden"}})
	d := h.gql(`query($o: GreetOptions) { greet(name: "ada", opts: $o) }`, map[string]any{"o": map[string]any{"loud": true, "times": 2}})
	greet := d["greet"].(map[string]any)
	args := greet["args"].(map[string]any)
	var opts map[string]any
	if s, ok := args["opts"].(string); !ok || json.Unmarshal([]byte(s), &opts) != nil || opts["loud"] != true || args["name"] != "ada" {
		t.Errorf("args = %v; want name and opts as JSON text", args)
	}
	if diff := cmp.Diff(map[string]any{"GREETING": "hi"}, greet["env"]); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	core := greet["core"].(map[string]any)
	if core["domain"] != "hooks.test" || core["instance_id"] == "" || core["account_id"] == "" || core["token"] != h.token {
		t.Errorf("core = %v", core)
	}
	// Through REST too, with a scalar and an input-object argument.
	status, body := h.env.Do("GET", "/rest/v1/fn/query/greet?name=bob&opts="+url.QueryEscape(`{"loud":false,"times":3}`),
		map[string]string{"core-domain": "hooks.test", "authorization": h.token}, nil)
	restArgs, _ := body["data"].(map[string]any)["greet"].(map[string]any)["args"].(map[string]any)
	var restOpts map[string]any
	if s, _ := restArgs["opts"].(string); status != 200 || restArgs["name"] != "bob" || json.Unmarshal([]byte(s), &restOpts) != nil || restOpts["times"] != float64(3) {
		t.Errorf("REST fn call: %d %s", status, dump(body))
	}
	// A function's error becomes a GraphQL error with its code.
	st, b := h.env.GraphQL("hooks.test", h.token, `mutation { refuse(reason: "no") }`, nil)
	if st != 200 || !strings.Contains(dump(b), `"NOPE"`) || !strings.Contains(dump(b), "refused: no") {
		t.Errorf("function error: %d %s", st, dump(b))
	}
	st, b = h.env.GraphQL("hooks.test", h.token, `{ unpublished }`, nil)
	if !strings.Contains(dump(b), "not published") || !strings.Contains(dump(b), "NOT_FOUND") {
		t.Errorf("unpublished function: %d %s", st, dump(b))
	}
	// Anonymous callers reach @public fields only.
	if st, b := h.env.GraphQL("hooks.test", "", `{ hello(name: "anon") }`, nil); st != 200 || b["errors"] != nil {
		t.Errorf("anonymous @public field: %d %s", st, dump(b))
	}
	if st, _ := h.env.GraphQL("hooks.test", "", `{ secret(name: "anon") }`, nil); st != 401 {
		t.Errorf("anonymous non-public field: %d, want 401", st)
	}
}

func TestSandbox(t *testing.T) {
	t.Parallel()
	loopback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") }))
	defer loopback.Close()
	// The looping call below ends at this deadline; the calls beside it
	// take a small part of it even under the race detector on a busy
	// machine.
	cfg := fn.DefaultConfig()
	cfg.Timeout = 10 * time.Second
	h := start(t, tenant.Settings{AnonymousRequests: true, Fetch: tenant.Fetch{Enabled: true, AllowHosts: []string{"127.0.0.1", "localhost"}}},
		servertest.WithFunctionConfig(cfg))

	// A prototype change in one call is invisible to the next.
	for i := 0; i < 2; i++ {
		if d := h.gql(`{ proto }`, nil); d["proto"].(map[string]any)["before"] != nil {
			t.Errorf("call %d saw a polluted Object.prototype: %v", i, d["proto"])
		}
	}
	// No file system, no process, no fetch to loopback even when allowed.
	d := h.gql(`query($u: String) { escape(name: $u) }`, map[string]any{"u": loopback.URL})
	if diff := cmp.Diff(map[string]any{"fs": "refused", "process": "undefined", "fetch": "refused"}, d["escape"]); diff != "" {
		t.Errorf("escape attempts (-want +got):\n%s", diff)
	}

	// An infinite loop is stopped at the deadline while other calls are served.
	var wg sync.WaitGroup
	wg.Add(1)
	var spinStatus int
	go func() {
		defer wg.Done()
		res, _ := h.hook("POST", "spin", "", nil, "{}")
		spinStatus = res.StatusCode
	}()
	for i := 0; i < 5; i++ {
		if res, out := h.hook("POST", "mirror", "", nil, "{}"); res.StatusCode != 200 {
			t.Errorf("a call beside the loop: %d %s", res.StatusCode, out)
		}
	}
	wg.Wait()
	if spinStatus != 504 {
		t.Errorf("the looping webhook answered %d, want 504", spinStatus)
	}
}

// TestWebhookFailuresAreDiagnosed: a function that throws, a version that
// is not published, and a webhook whose field a release swap removed each
// answer 502 with their class of failure and nothing of the function's
// internals; the instance's function log says what happened (the throw's
// stack, the version, the field), and the server's log line carries the
// cause without a stack.
func TestWebhookFailuresAreDiagnosed(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.WarnLevel)
	h := start(t, tenant.Settings{AnonymousRequests: true}, servertest.WithLogger(zap.New(core, zap.AddStacktrace(zap.ErrorLevel))))
	functionLog := func() string {
		if err := h.env.Logs.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, body := h.env.Admin("GET", "/instances/hooks.test/logs", nil)
		return dump(body["entries"])
	}
	for _, tc := range []struct {
		name, hook, query, code, log string
	}{
		{"throw", "respond", "?mode=throw", "FUNCTION_ERROR", "secret internals at line 7"},
		{"not published", "ghost", "", "FUNCTION_NOT_PUBLISHED", "function nowhere version v9 is not published"},
	} {
		res, out := h.hook("POST", tc.hook, tc.query, nil, "{}")
		if res.StatusCode != 502 || !strings.Contains(out, `"code":"`+tc.code+`"`) || strings.Contains(out, "secret") {
			t.Errorf("%s: %d %s, want 502 %s without internals", tc.name, res.StatusCode, out, tc.code)
		}
		if l := functionLog(); !strings.Contains(l, tc.log) {
			t.Errorf("%s: the function log does not say %q: %s", tc.name, tc.log, l)
		}
	}
	if l := functionLog(); !strings.Contains(l, "at main (") && !strings.Contains(l, "index.js:") {
		t.Errorf("the function log has no stack of the throw: %s", l)
	}

	// A swap to a release without the field the webhook runs.
	sdl := testfiles.Read(t, "e2e", "webhooks.graphql")
	h.env.PutRelease("hooks", "v2", strings.Replace(sdl, "  mirror(payload: WebhookPayload): WebhookResponse @fn(name: \"mirror\", version: \"v1\")\n", "", 1))
	if status, body := h.env.Admin("PATCH", "/instances/hooks.test", map[string]any{"release": "v2"}); status != 200 {
		t.Fatalf("swap: %d %s", status, dump(body))
	}
	res, out := h.hook("POST", "mirror", "", nil, "{}")
	if res.StatusCode != 502 || !strings.Contains(out, `"code":"WEBHOOK_FIELD_MISSING"`) {
		t.Errorf("a removed field: %d %s, want 502 WEBHOOK_FIELD_MISSING", res.StatusCode, out)
	}
	if l := functionLog(); !strings.Contains(l, "Mutation.mirror is not a field of the schema") {
		t.Errorf("the function log does not name the missing field: %s", l)
	}

	// The server's log lines of the three carry their causes, no stack.
	var causes []string
	for _, e := range logs.FilterMessage("request").All() {
		fields := e.ContextMap()
		if fields["status"] == int64(502) {
			if e.Stack != "" {
				t.Errorf("the request log line of %v carries a stack", fields["path"])
			}
			if s, ok := fields["error"].(string); ok {
				causes = append(causes, s)
			}
		}
	}
	for _, want := range []string{"secret internals", "not published", "not a field of the schema"} {
		if !slices.ContainsFunc(causes, func(c string) bool { return strings.Contains(c, want) }) {
			t.Errorf("no request log line says %q: %q", want, causes)
		}
	}
}

// TestRequestTimeout: past the server's request time-out a request stops
// (the looping function is interrupted) and answers 504 TIMEOUT, through
// /graphql and a webhook alike; the server goes on serving. The
// function's own time-out is far longer, so it is the request's that
// ends it.
func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	cfg := fn.DefaultConfig()
	cfg.Timeout = time.Hour
	h := start(t, tenant.Settings{AnonymousRequests: true}, servertest.WithFunctionConfig(cfg),
		// Long enough for the setup requests (creating an instance builds
		// indexes, slow on MongoDB on a loaded machine), which share it;
		// the two looping calls each wait it out.
		servertest.WithConfig(func(c *server.Config) { c.RequestTimeout = 15 * time.Second }))
	status, body := h.env.GraphQL("hooks.test", h.token, `mutation { spin(payload: {url: {path: "/"}, headers: {}, body: "{}"}) { status } }`, nil)
	if _, code := servertest.FirstError(body); status != http.StatusGatewayTimeout || code != "TIMEOUT" {
		t.Errorf("a looping function through /graphql: %d %s, want 504 TIMEOUT", status, dump(body))
	}
	res, out := h.hook("POST", "spin", "", nil, "{}")
	if res.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(out), "TIMEOUT") {
		t.Errorf("a looping webhook: %d %s, want 504 TIMEOUT", res.StatusCode, out)
	}
	h.gql(`{ __typename }`, nil)
}
