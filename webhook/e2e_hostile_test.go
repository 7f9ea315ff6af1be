package webhook_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// The hostile bodies and names below go to an app of their own, so that
// these tests do not depend on the functions of e2e_test.go.
const hostileSDL = `
type Mutation {
  raw(payload: WebhookPayload): WebhookResponse @fn(name: "raw", version: "v1")
  merge(payload: WebhookPayload): WebhookResponse @fn(name: "merge", version: "v1")
  probe(v: Json): Json @fn(name: "probe", version: "v1")
}
type Query { ping: Json @fn(name: "probe", version: "v1") }
`

var hostileFunctions = map[string]string{
	// raw answers the body it was given, as text, with its length.
	"raw": `exports.main = (input, cb) => { const p = JSON.parse(input.args.payload); cb({status: 200, headers: {'content-type': 'application/json'}, body: {length: p.body.length, body: p.body}}, null); };`,
	// merge deep-merges the JSON body into a fresh object the careless
	// way (the classic prototype pollution), and says whether
	// Object.prototype was polluted before it ran and after.
	"merge": `exports.main = (input, cb) => {
		const before = ({}).polluted === undefined ? null : ({}).polluted;
		const merge = (t, s) => { for (const k in s) { if (typeof s[k] === 'object' && s[k] !== null) { if (typeof t[k] !== 'object') t[k] = {}; merge(t[k], s[k]); } else t[k] = s[k]; } return t; };
		const body = JSON.parse(JSON.parse(input.args.payload).body);
		merge({}, body);
		merge({}, JSON.parse('{"__proto__": {"polluted": "by merge"}}'));
		cb({status: 200, body: {before, after: ({}).polluted === undefined ? null : ({}).polluted}}, null);
	};`,
	// probe reports what an argument looks like inside the function, and
	// whether Object.prototype was polluted when it started; then it
	// pollutes it.
	"probe": `exports.main = (input, cb) => {
		const before = ({}).polluted === undefined ? null : ({}).polluted;
		const v = input.args.v;
		const out = {before};
		if (v && typeof v === 'object') {
			out.ownKeys = Object.keys(v).sort();
			out.protoIsObject = Object.getPrototypeOf(v) === Object.prototype;
			out.inherited = v.polluted === undefined || Object.prototype.hasOwnProperty.call(v, 'polluted') ? null : v.polluted;
			out.text = JSON.stringify(v);
		}
		Object.prototype.polluted = 'by probe';
		cb(out, null);
	};`,
}

// hostile is a server with hostileSDL deployed on hostile.test, its
// functions published and its webhooks saved.
type hostile struct {
	t     *testing.T
	env   *servertest.Env
	token string
}

func startHostile(t *testing.T, settings tenant.Settings, opts ...servertest.Option) *hostile {
	t.Helper()
	cfg := fn.DefaultConfig()
	cfg.Timeout = time.Minute // never reached: these functions return at once
	env := servertest.Start(t, append([]servertest.Option{servertest.WithFunctionConfig(cfg)}, opts...)...)
	env.PutRelease("hostile", "v1", hostileSDL)
	settings.AnonymousRequests = true
	h := &hostile{t: t, env: env, token: env.CreateInstance("hostile.test", "hostile", "v1", settings)}
	env.PublishFunctions("hostile", hostileFunctions)
	status, body := env.GraphQL("hostile.test", h.token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"Webhook": []any{
			map[string]any{"name": "raw", "query": map[string]any{"type": "Mutation", "field": "raw"}},
			map[string]any{"name": "merge", "query": map[string]any{"type": "Mutation", "field": "merge"}},
		}}})
	if status != 200 || body["errors"] != nil {
		t.Fatalf("saving the webhooks: %d %s", status, dump(body))
	}
	return h
}

// send sends a request to path (under the server's URL) with the raw
// body and headers.
func (h *hostile) send(method, path string, headers map[string]string, body []byte) (*http.Response, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.env.URL+path, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := h.env.Client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return res, string(out)
}

// calls is the number of function calls the instance's usage counts.
func (h *hostile) calls() float64 {
	h.t.Helper()
	if err := h.env.Meter.Flush(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
	status, body := h.env.Admin("GET", "/instances/hostile.test/usage", nil)
	if status != 200 {
		h.t.Fatalf("usage: %d %s", status, dump(body))
	}
	n, _ := body["functionCalls"].(float64)
	return n
}

// textAsJSON returns a probe's answer with its text decoded, so that the
// order of keys (a Go map's, when the arguments were built) does not
// matter.
func textAsJSON(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, e := range m {
		out[k] = e
	}
	if s, ok := m["text"].(string); ok {
		var decoded any
		if json.Unmarshal([]byte(s), &decoded) == nil {
			out["text"] = decoded
		}
	}
	return out
}

// TestHostileWebhookNames: a webhook name that tries to climb out of its
// place, an encoded one, a NUL and a 5 KB name all answer exactly what
// an unknown webhook answers, and no function runs.
//
// hostile checklist 35: webhook names ../../x, %2e%2e%2f, a NUL, 5 KB →
// the same 404 as an unknown name.
func TestHostileWebhookNames(t *testing.T) {
	t.Parallel()
	h := startHostile(t, tenant.Settings{})
	wantRes, want := h.send("POST", "/webhook/hostile.test/nope", nil, []byte("{}"))
	if wantRes.StatusCode != 404 || !strings.Contains(want, `"NOT_FOUND"`) {
		t.Fatalf("an unknown webhook: %d %s", wantRes.StatusCode, want)
	}
	before := h.calls()
	for name, path := range map[string]string{
		"../../x":            "/webhook/hostile.test/../../x",
		"..%2F..%2Fx":        "/webhook/hostile.test/..%2F..%2Fx",
		"%2e%2e%2f":          "/webhook/hostile.test/%2e%2e%2f",
		"%2e%2e%2fraw":       "/webhook/hostile.test/%2e%2e%2fraw",
		"NUL":                "/webhook/hostile.test/%00",
		"NUL then raw":       "/webhook/hostile.test/raw%00",
		"5 KB":               "/webhook/hostile.test/" + strings.Repeat("x", 5<<10),
		"5 KB of ..%2F":      "/webhook/hostile.test/" + strings.Repeat("..%2F", 1<<10),
		"domain ../":         "/webhook/..%2Fhostile.test/raw",
		"domain with a NUL":  "/webhook/hostile.test%00/raw",
		"a dot":              "/webhook/hostile.test/.",
		"encoded raw, twice": "/webhook/hostile.test/%2572aw",
	} {
		t.Run(name, func(t *testing.T) {
			res, out := h.send("POST", path, nil, []byte("{}"))
			if res.StatusCode != 404 || out != want {
				t.Errorf("POST %.80s: %d %s, want the unknown webhook's 404 %s", path, res.StatusCode, out, want)
			}
		})
	}
	if n := h.calls(); n != before {
		t.Errorf("%v function calls for hostile names, want none", n-before)
	}
	// The real name still answers.
	if res, out := h.send("POST", "/webhook/hostile.test/raw", nil, []byte("{}")); res.StatusCode != 200 {
		t.Errorf("the real webhook: %d %s", res.StatusCode, out)
	}
}

// TestHostileMarkupReachesTheFunctionAsText: XML with an external entity,
// billion laughs and 100,000-deep nesting is not parsed by the receiver:
// each reaches the function as the exact text sent, unexpanded, and no
// file content appears in the answer.
//
// hostile checklist 36: XML external entity, billion laughs, 100,000-deep
// nesting → no expansion, no file content, no panic.
func TestHostileMarkupReachesTheFunctionAsText(t *testing.T) {
	t.Parallel()
	h := startHostile(t, tenant.Settings{})
	passwd, _ := os.ReadFile("/etc/passwd") // what an expanded entity would leak, where there is one
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">`
	prev := "lol"
	for i := 1; i <= 9; i++ {
		laughs += fmt.Sprintf(`<!ENTITY lol%d "%s">`, i, strings.Repeat("&"+prev+";", 10))
		prev = fmt.Sprintf("lol%d", i)
	}
	laughs += `]><lolz>&lol9;</lolz>`
	cases := map[string]string{
		"external entity":   `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><x>&xxe;</x>`,
		"parameter entity":  `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY % p SYSTEM "http://169.254.169.254/latest/meta-data/"> %p;]><x/>`,
		"billion laughs":    laughs,
		"100,000 deep":      strings.Repeat("<a>", 100_000) + strings.Repeat("</a>", 100_000),
		"100,000 deep JSON": strings.Repeat(`[`, 100_000) + strings.Repeat("]", 100_000),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			res, out := h.send("POST", "/webhook/hostile.test/raw", map[string]string{"Content-Type": "application/xml"}, []byte(body))
			if res.StatusCode != 200 {
				t.Fatalf("%d %.300s", res.StatusCode, out)
			}
			var got struct {
				Length int    `json:"length"`
				Body   string `json:"body"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %.300s", err, out)
			}
			if got.Body != body || got.Length != len(body) {
				t.Errorf("the function saw %d characters, want the %d sent, unexpanded", got.Length, len(body))
			}
			if len(passwd) > 0 && strings.Contains(out, "root:") {
				t.Error("the answer holds the content of /etc/passwd")
			}
		})
	}
	// A body under the body limit whose encoding as the function's input
	// (quotes escaped twice) passes the input bound: 413 naming it.
	res, out := h.send("POST", "/webhook/hostile.test/raw", nil, []byte(strings.Repeat(`{"a":`, 100_000)))
	if res.StatusCode != 413 || !strings.Contains(out, `"TOO_LARGE"`) || !strings.Contains(out, "function's input") {
		t.Errorf("a body over the input bound once encoded: %d %s, want 413 TOO_LARGE naming the input bound", res.StatusCode, out)
	}
}

// TestHostileFormsStayWithinTheLimits: a multipart body of 10,000 parts
// under the body limit reaches the function as text (it is never
// parsed); a 10 MB url-encoded form answers 413 and no function runs.
//
// hostile checklist 37: multipart with 10,000 parts, a 10 MB url-encoded
// form → within the limits (text to the function, or 413). The 1 MB
// header line is server/connection_bounds_e2e_test.go
// TestOversizedHeaderLine.
func TestHostileFormsStayWithinTheLimits(t *testing.T) {
	t.Parallel()
	h := startHostile(t, tenant.Settings{})
	var mp strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&mp, "--b\r\nContent-Disposition: form-data; name=\"p%d\"\r\n\r\nx\r\n", i)
	}
	mp.WriteString("--b--\r\n")
	if mp.Len() >= 1<<20 {
		t.Fatalf("the multipart body is %d bytes, over the limit it should stay under", mp.Len())
	}
	res, out := h.send("POST", "/webhook/hostile.test/raw", map[string]string{"Content-Type": "multipart/form-data; boundary=b"}, []byte(mp.String()))
	var got struct {
		Body string `json:"body"`
	}
	if res.StatusCode != 200 || json.Unmarshal([]byte(out), &got) != nil || got.Body != mp.String() {
		t.Errorf("10,000 parts: %d, the function saw %d bytes of the %d sent", res.StatusCode, len(got.Body), mp.Len())
	}

	before := h.calls()
	form := bytes.Repeat([]byte("a=1&"), 10<<20/4)
	res, out = h.send("POST", "/webhook/hostile.test/raw", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form)
	if res.StatusCode != 413 || !strings.Contains(out, `"TOO_LARGE"`) {
		t.Errorf("a 10 MB form: %d %.300s, want 413 TOO_LARGE", res.StatusCode, out)
	}
	if n := h.calls(); n != before {
		t.Errorf("%v function calls for the refused form, want none", n-before)
	}
}

// TestCompressedBodiesAreRefused: a body with a Content-Encoding is never
// decompressed: 415 UNSUPPORTED_MEDIA_TYPE naming the header, whatever
// its size, and no function runs; identity is accepted.
//
// hostile checklist 38: a gzip Content-Encoding body (10 MB expanding to
// far more) → 415, never decompressed.
func TestCompressedBodiesAreRefused(t *testing.T) {
	t.Parallel()
	h := startHostile(t, tenant.Settings{})
	var bomb bytes.Buffer
	zw, err := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range 64 { // 64 MiB of zeros in about 64 KiB
		if _, err := zw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	before := h.calls()
	for _, enc := range []string{"gzip", "deflate", "br", "identity, gzip", "GZIP"} {
		res, out := h.send("POST", "/webhook/hostile.test/raw", map[string]string{"Content-Encoding": enc, "Content-Type": "application/json"}, bomb.Bytes())
		if res.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(out, `"UNSUPPORTED_MEDIA_TYPE"`) || !strings.Contains(out, "Content-Encoding") {
			t.Errorf("Content-Encoding %q: %d %s, want 415 UNSUPPORTED_MEDIA_TYPE naming the header", enc, res.StatusCode, out)
		}
	}
	if n := h.calls(); n != before {
		t.Errorf("%v function calls for compressed bodies, want none", n-before)
	}
	if res, out := h.send("POST", "/webhook/hostile.test/raw", map[string]string{"Content-Encoding": "identity"}, []byte("plain")); res.StatusCode != 200 || !strings.Contains(out, `"plain"`) {
		t.Errorf("Content-Encoding identity: %d %s, want 200", res.StatusCode, out)
	}
}

// TestProtoKeysDoNotPollute: a webhook body and GraphQL arguments
// carrying __proto__ (and constructor.prototype) reach the function as
// data — own keys, as JSON.parse makes them — and whatever one call does
// to Object.prototype, the next call, of the same or another door, starts
// clean.
//
// hostile checklist 40: a request's JSON carries __proto__ → the next
// invocation does not see it.
func TestProtoKeysDoNotPollute(t *testing.T) {
	t.Parallel()
	h := startHostile(t, tenant.Settings{})
	body := `{"__proto__": {"polluted": "by body"}, "constructor": {"prototype": {"polluted": "by constructor"}}}`
	for i := range 2 {
		res, out := h.send("POST", "/webhook/hostile.test/merge", map[string]string{"Content-Type": "application/json"}, []byte(body))
		if res.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", i, res.StatusCode, out)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("call %d: %v: %s", i, err, out)
		}
		// The careless merge pollutes its own call, never the next one.
		if got["before"] != nil || got["after"] != "by merge" {
			t.Errorf("webhook call %d: %s, want before null and after \"by merge\"", i, out)
		}
	}
	arg := map[string]any{"__proto__": map[string]any{"polluted": "by argument"}, "constructor": map[string]any{"prototype": map[string]any{"polluted": "x"}}}
	want := map[string]any{"before": nil, "ownKeys": []any{"__proto__", "constructor"}, "protoIsObject": true, "inherited": nil,
		"text": `{"__proto__":{"polluted":"by argument"},"constructor":{"prototype":{"polluted":"x"}}}`}
	for i := range 2 {
		status, res := h.env.GraphQL("hostile.test", h.token, `mutation($v: Json) { probe(v: $v) }`, map[string]any{"v": arg})
		got, _ := res["data"].(map[string]any)
		if status != 200 || res["errors"] != nil {
			t.Fatalf("GraphQL call %d: %d %s", i, status, dump(res))
		}
		if d := dump(textAsJSON(got["probe"])); d != dump(textAsJSON(want)) {
			t.Errorf("GraphQL call %d: the function saw %s, want %s", i, d, dump(want))
		}
	}
	// A literal in the document, not a variable.
	status, res := h.env.GraphQL("hostile.test", h.token, `mutation { probe(v: {__proto__: {polluted: "literal"}}) }`, nil)
	if got, _ := res["data"].(map[string]any); status != 200 || res["errors"] != nil || dump(got["probe"]) != dump(map[string]any{
		"before": nil, "ownKeys": []any{"__proto__"}, "protoIsObject": true, "inherited": nil, "text": `{"__proto__":{"polluted":"literal"}}`}) {
		t.Errorf("a __proto__ literal: %d %s", status, dump(res))
	}
	// And the next call of another door starts clean.
	if status, res := h.env.GraphQL("hostile.test", h.token, `{ ping }`, nil); status != 200 || dump(res["data"]) != dump(map[string]any{"ping": map[string]any{"before": nil}}) {
		t.Errorf("the next query: %d %s, want before null", status, dump(res))
	}
}

// callsBackSDL: ask runs any document through core.graphql as its caller;
// probe, a webhook's field, introspects and tries an operator-shaped
// login through core.graphql as the webhook's account.
const callsBackSDL = `
type Book { title: String }
type Query {
  ask(doc: String!, vars: Json): Json @fn(name: "ask", version: "v1")
}
type Mutation {
  probe(payload: WebhookPayload): WebhookResponse @fn(name: "probe", version: "v1")
}`

var callsBack = map[string]string{
	"ask": `exports.main = async (input) => core.graphql(input.args.doc, input.args.vars);`,
	"probe": `exports.main = async () => {
		const schema = await core.graphql('{ __schema { queryType { name } } }');
		const login = await core.graphql('query($u: String!) { login(username: $u, password: "x") { sessionToken } }', { u: { $ne: null } });
		return { status: 200, body: { schema, login } };
	};`,
}

// Functions' core.graphql and webhooks' documents run through the same
// executor as /graphql, as their caller: hostile checklist 23
// (introspection refused to an account's session, here calling back from
// a function and running a webhook) and hostile checklist 7 (an object
// for a String variable refused) hold for them too.
func TestCallsBackFollowTheCaller(t *testing.T) {
	t.Parallel()
	cfg := fn.DefaultConfig()
	cfg.Timeout = 5 * time.Second // generous: the outcome matters, not the time
	env := servertest.Start(t, servertest.WithFunctionConfig(cfg))
	env.PutRelease("calls", "v1", callsBackSDL)
	env.PublishFunctions("calls", callsBack)
	token := env.CreateInstance("calls.test", "calls", "v1", tenant.Settings{AnonymousRequests: true})
	run := func(token, query string, vars map[string]any) map[string]any {
		t.Helper()
		return env.Data("calls.test", token, query, vars)
	}
	d := run(token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
		map[string]any{"v": map[string]any{"username": "ada", "password": map[string]any{"value": "correct horse battery"}}})
	adaID, _ := d["createAccount"].(map[string]any)["id"].(string)
	_, body := env.GraphQL("calls.test", "", `{ login(username: "ada", password: "correct horse battery") { sessionToken } }`, nil)
	ada, _ := body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)
	if adaID == "" || ada == "" {
		t.Fatalf("ada's account and session: %q %q", adaID, ada)
	}
	run(token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{"Webhook": []any{
		map[string]any{"name": "asinstance", "query": map[string]any{"type": "Mutation", "field": "probe"}},
		map[string]any{"name": "asada", "as": map[string]any{"core": map[string]any{"id": adaID}}, "query": map[string]any{"type": "Mutation", "field": "probe"}},
	}}})

	const introspect = `{ __type(name: "Book") { name } }`
	const refusedIntrospection = "introspection (__schema, __type) is refused"
	const refusedLogin = "variable $u: expected a String, got an object"
	ask := func(token, doc string, vars map[string]any) string {
		t.Helper()
		out, _ := json.Marshal(run(token, `query($d: String!, $v: Json) { ask(doc: $d, vars: $v) }`, map[string]any{"d": doc, "v": vars})["ask"])
		return string(out)
	}
	t.Run("core.graphql as the instance token", func(t *testing.T) {
		if got := ask(token, introspect, nil); got != `{"data":{"__type":{"name":"Book"}}}` {
			t.Errorf("introspection: %s", got)
		}
	})
	t.Run("core.graphql as an account's session", func(t *testing.T) {
		if got := ask(ada, introspect, nil); !strings.Contains(got, refusedIntrospection) || !strings.Contains(got, `"FORBIDDEN"`) {
			t.Errorf("introspection: %s", got)
		}
		got := ask(ada, `query($u: String!) { login(username: $u, password: "x") { sessionToken } }`, map[string]any{"u": map[string]any{"$ne": nil}})
		if !strings.Contains(got, refusedLogin) || strings.Contains(got, "sessionToken") {
			t.Errorf("an object for a String: %s", got)
		}
	})

	hook := func(name string) map[string]any {
		t.Helper()
		res, out := env.DoRaw(http.MethodPost, "/webhook/calls.test/"+name, nil, "{}")
		var got map[string]any
		if res.StatusCode != http.StatusOK || json.Unmarshal(out, &got) != nil {
			t.Fatalf("webhook %s: %d %s", name, res.StatusCode, out)
		}
		return got
	}
	t.Run("a webhook as the instance's account", func(t *testing.T) {
		got := hook("asinstance")
		if s, _ := json.Marshal(got["schema"]); string(s) != `{"data":{"__schema":{"queryType":{"name":"Query"}}}}` {
			t.Errorf("introspection: %s", s)
		}
		if l, _ := json.Marshal(got["login"]); !strings.Contains(string(l), refusedLogin) {
			t.Errorf("an object for a String: %s", l)
		}
	})
	t.Run("a webhook as an account", func(t *testing.T) {
		got := hook("asada")
		if s, _ := json.Marshal(got["schema"]); !strings.Contains(string(s), refusedIntrospection) {
			t.Errorf("introspection: %s", s)
		}
		if l, _ := json.Marshal(got["login"]); !strings.Contains(string(l), refusedLogin) || strings.Contains(string(l), "sessionToken") {
			t.Errorf("an object for a String: %s", l)
		}
	})
}
