package server_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/tenant"
)

// usageSDL has records, a function called through GraphQL and REST, and
// one a webhook runs.
const usageSDL = `type Note { text: String }
type Query { quick: String @fn(name: "quick", version: "v1") }
type Mutation { hook(payload: WebhookPayload): WebhookResponse @fn(name: "hook", version: "v1") }`

// usageFunctions are the functions of usageSDL.
var usageFunctions = map[string]string{
	"quick": `exports.main = (input, cb) => cb('done', null);`,
	"hook":  `exports.main = (input, cb) => cb({status: 200, body: 'hooked'}, null);`,
}

// TestUsage drives GET /admin/v1/instances/{domain}/usage through the
// real server: records and their bytes as the store keeps them, requests
// through every door, function calls through every door, and the same
// figures after the server restarts on its data directory.
func TestUsage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "core.db")
	open := func() *bolt.Store { return bolttest.OpenAt(t, path, nil) }
	st := open()
	env := servertest.Start(t, servertest.WithStore(st))
	env.PutRelease("use", "v1", usageSDL)
	env.PublishFunctions("use", usageFunctions)
	token := env.CreateInstance("use.test", "use", "v1", tenant.Settings{AnonymousRequests: true})
	other := env.CreateInstance("other.test", "use", "v1", tenant.Settings{})
	h := map[string]string{tenant.Header: "use.test", "authorization": token}

	usage := func(env *servertest.Env, domain string) map[string]any {
		t.Helper()
		st, body := env.Admin(http.MethodGet, "/instances/"+domain+"/usage", nil)
		if st != http.StatusOK {
			t.Fatalf("usage of %s: %d %s", domain, st, jsonText(body))
		}
		return body
	}
	count := func(body map[string]any, name string) int64 {
		n, _ := body[name].(float64)
		return int64(n)
	}
	fresh := usage(env, "use.test")
	since, err := time.Parse(time.RFC3339, fresh["since"].(string))
	if err != nil || since.IsZero() {
		t.Fatalf("since = %v: %v", fresh["since"], err)
	}
	// A new instance holds its own Account record, and has made no
	// request yet.
	if count(fresh, "records") != 1 || count(fresh, "storageBytes") <= 0 || count(fresh, "requests") != 0 || count(fresh, "functionCalls") != 0 {
		t.Errorf("usage of a new instance: %s", jsonText(fresh))
	}

	// 1: a batch of 3 notes (GraphQL).
	if st, body := env.GraphQL("use.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"Note": []any{map[string]any{"text": "a"}, map[string]any{"text": "b"}, map[string]any{"text": "c"}}}}); st != http.StatusOK || body["errors"] != nil {
		t.Fatalf("upsert: %d %s", st, jsonText(body))
	}
	// 2: a REST read; 3: a REST delete.
	if res, raw := env.DoRaw(http.MethodGet, "/rest/v1/Note", h, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("REST read: %d %s", res.StatusCode, raw)
	}
	if res, raw := env.DoRaw(http.MethodDelete, "/rest/v1/Note?arcql=text%20%3D%20%27c%27", h, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("REST delete: %d %s", res.StatusCode, raw)
	}
	// 4, 5: function calls through GraphQL and REST; 6: through a webhook
	// (7 saved it).
	if st, body := env.GraphQL("use.test", token, `{ quick }`, nil); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
		t.Fatalf("quick: %d %s", st, jsonText(body))
	}
	if res, raw := env.DoRaw(http.MethodGet, "/rest/v1/fn/query/quick", h, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("quick through REST: %d %s", res.StatusCode, raw)
	}
	if st, body := env.GraphQL("use.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"Webhook": map[string]any{"name": "h", "query": map[string]any{"type": "Mutation", "field": "hook"}}}}); st != http.StatusOK || body["errors"] != nil {
		t.Fatalf("saving the webhook: %d %s", st, jsonText(body))
	}
	if res, raw := env.DoRaw(http.MethodPost, "/webhook/use.test/h", nil, map[string]any{}); res.StatusCode != http.StatusOK || string(raw) != "hooked" {
		t.Fatalf("the webhook: %d %s", res.StatusCode, raw)
	}
	// Another instance's requests are its own.
	if st, _ := env.GraphQL("other.test", other, `{ quick }`, nil); st != http.StatusOK {
		t.Fatalf("another instance: %d", st)
	}

	got := usage(env, "use.test")
	// Own Account, a, b and the Webhook.
	want := map[string]int64{"records": 4, "requests": 7, "functionCalls": 3}
	for name, n := range want {
		if count(got, name) != n {
			t.Errorf("%s = %d, want %d (%s)", name, count(got, name), n, jsonText(got))
		}
	}
	if count(got, "storageBytes") <= count(fresh, "storageBytes") || count(got, "functionMillis") < 0 || got["since"] != fresh["since"] {
		t.Errorf("usage after the requests: %s (before: %s)", jsonText(got), jsonText(fresh))
	}
	if o := usage(env, "other.test"); count(o, "requests") != 1 || count(o, "functionCalls") != 1 || count(o, "records") != 1 {
		t.Errorf("usage of the other instance: %s", jsonText(o))
	}
	if st, body := env.Admin(http.MethodGet, "/instances/nowhere.test/usage", nil); st != http.StatusNotFound {
		t.Errorf("usage of an unknown domain: %d %s, want 404", st, jsonText(body))
	}
	if res, _ := env.DoRaw(http.MethodGet, "/admin/v1/instances/use.test/usage", nil, nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("usage without the admin token: %d, want 401", res.StatusCode)
	}

	// Restart on the same file: the same figures.
	env.Stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open()
	t.Cleanup(func() { st.Close() })
	env = servertest.Start(t, servertest.WithStore(st))
	after := usage(env, "use.test")
	if jsonText(after) != jsonText(got) {
		t.Errorf("usage after a restart:\n%s\nwant\n%s", jsonText(after), jsonText(got))
	}
	if st, body := env.GraphQL("use.test", token, `{ quick }`, nil); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
		t.Fatalf("quick after the restart: %d %s", st, jsonText(body))
	}
	if n := usage(env, "use.test"); count(n, "requests") != 8 || count(n, "functionCalls") != 4 {
		t.Errorf("usage after a request past the restart: %s", jsonText(n))
	}
	// Deleting the instance deletes its usage; a new one on the domain
	// starts from nothing.
	if st, body := env.Admin(http.MethodDelete, "/instances/use.test", nil); st != http.StatusOK {
		t.Fatalf("deleting: %d %s", st, jsonText(body))
	}
	if st, _ := env.Admin(http.MethodGet, "/instances/use.test/usage", nil); st != http.StatusNotFound {
		t.Errorf("usage of a deleted instance: %d, want 404", st)
	}
	env.CreateInstance("use.test", "use", "v1", tenant.Settings{})
	if n := usage(env, "use.test"); count(n, "records") != 1 || count(n, "requests") != 0 || count(n, "functionCalls") != 0 {
		t.Errorf("usage of a new instance on the domain: %s", jsonText(n))
	}
}

// TestFunctionCallsPerDay: past its functionCallsPerDay quota an
// instance's function calls are refused with QUOTA_EXCEEDED, through
// GraphQL and webhooks alike, while its other requests and other
// instances' calls go on; the count survives a restart, and the next UTC
// day starts afresh. The meter's clock is the test's.
func TestFunctionCallsPerDay(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	path := filepath.Join(t.TempDir(), "core.db")
	open := func() *bolt.Store { return bolttest.OpenAt(t, path, nil) }
	st := open()
	env := servertest.Start(t, servertest.WithStore(st), servertest.WithMeterClock(now))
	env.PutRelease("use", "v1", usageSDL)
	env.PublishFunctions("use", usageFunctions)
	token := env.CreateInstance("calls.test", "use", "v1", tenant.Settings{AnonymousRequests: true, Quota: tenant.Quota{FunctionCallsPerDay: 3}})
	free := env.CreateInstance("free.test", "use", "v1", tenant.Settings{})
	if st, body := env.GraphQL("calls.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"Webhook": map[string]any{"name": "h", "query": map[string]any{"type": "Mutation", "field": "hook"}}}}); st != http.StatusOK || body["errors"] != nil {
		t.Fatalf("saving the webhook: %d %s", st, jsonText(body))
	}
	call := func(env *servertest.Env) (int, map[string]any) {
		return env.GraphQL("calls.test", token, `{ quick }`, nil)
	}
	refused := func(what, text string) {
		t.Helper()
		if !strings.Contains(text, "QUOTA_EXCEEDED") || !strings.Contains(text, "functionCallsPerDay quota of 3") {
			t.Errorf("%s past the quota: %s, want QUOTA_EXCEEDED naming functionCallsPerDay and 3", what, text)
		}
	}
	for i := range 2 {
		if st, body := call(env); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
			t.Fatalf("call %d: %d %s", i+1, st, jsonText(body))
		}
	}
	if res, raw := env.DoRaw(http.MethodPost, "/webhook/calls.test/h", nil, map[string]any{}); res.StatusCode != http.StatusOK {
		t.Fatalf("the webhook's call, the third: %d %s", res.StatusCode, raw)
	}
	_, body := call(env)
	refused("a GraphQL call", jsonText(body))
	res, raw := env.DoRaw(http.MethodPost, "/webhook/calls.test/h", nil, map[string]any{})
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a webhook past the quota: %d, want 403", res.StatusCode)
	}
	refused("a webhook", string(raw))
	// Other requests of the instance, and other instances, go on.
	if st, body := env.GraphQL("calls.test", token, `{ find(type: Note, arcql: "*") { edges { cursor } } }`, nil); st != http.StatusOK || body["errors"] != nil {
		t.Errorf("a read past the call quota: %d %s", st, jsonText(body))
	}
	if st, body := env.GraphQL("free.test", free, `{ quick }`, nil); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
		t.Errorf("another instance's call: %d %s", st, jsonText(body))
	}
	// Refused calls are not counted.
	if _, u := env.Admin(http.MethodGet, "/instances/calls.test/usage", nil); u["functionCalls"] != 3.0 {
		t.Errorf("functionCalls = %v, want 3", u["functionCalls"])
	}

	// A restart keeps the day's count.
	env.Stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open()
	t.Cleanup(func() { st.Close() })
	env = servertest.Start(t, servertest.WithStore(st), servertest.WithMeterClock(now))
	_, body = call(env)
	refused("a call after a restart", jsonText(body))
	if !strings.Contains(jsonText(body), "2026-03-02T00:00:00Z") {
		t.Errorf("the refusal does not say when calls come back: %s", jsonText(body))
	}
	// Raising the quota lets the next call through.
	if st, body := env.Admin(http.MethodPatch, "/instances/calls.test", map[string]any{"quota": map[string]any{"functionCallsPerDay": 4}}); st != http.StatusOK {
		t.Fatalf("raising the quota: %d %s", st, jsonText(body))
	}
	if st, body := call(env); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
		t.Errorf("a call under the raised quota: %d %s", st, jsonText(body))
	}
	_, body = call(env)
	if !strings.Contains(jsonText(body), "functionCallsPerDay quota of 4") {
		t.Errorf("the fifth call: %s, want the quota of 4 named", jsonText(body))
	}
	// The next day (UTC) starts afresh.
	clock.Add(int64(2 * time.Hour))
	for i := range 4 {
		if st, body := call(env); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
			t.Fatalf("call %d of the next day: %d %s", i+1, st, jsonText(body))
		}
	}
	_, body = call(env)
	refused4 := jsonText(body)
	if !strings.Contains(refused4, "QUOTA_EXCEEDED") || !strings.Contains(refused4, "2026-03-03T00:00:00Z") {
		t.Errorf("the fifth call of the next day: %s", refused4)
	}
	if _, u := env.Admin(http.MethodGet, "/instances/calls.test/usage", nil); u["functionCalls"] != 8.0 {
		t.Errorf("functionCalls = %v, want 8 over both days", u["functionCalls"])
	}
	// The past day's counter is gone from the store.
	if err := env.Meter.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	inst, _ := env.Directory.Lookup("calls.test")
	u, err := env.Store.Usage(context.Background(), inst.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, past := u.Counters["functionCalls/2026-03-01"]; past || u.Counters["functionCalls/2026-03-02"] != 4 {
		t.Errorf("day counters in the store: %v, want only 2026-03-02's 4", u.Counters)
	}
}
