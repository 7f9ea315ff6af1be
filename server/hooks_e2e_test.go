package server_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/poll"

	"github.com/corehq/core/hooks"
	"github.com/corehq/core/internal/hooktest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

const hookUpsert = `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`

// hookInstance starts an instance of notes on env and returns its token.
func hookInstance(t *testing.T, env *servertest.Env, domain string) string {
	t.Helper()
	env.PutRelease("notes", "v1", "type Note { text: String }")
	return env.CreateInstance(domain, "notes", "v1", tenant.Settings{})
}

// upsertOK runs an upsert that must succeed and returns the first id.
func upsertOK(t *testing.T, env *servertest.Env, domain, token string, values map[string]any) string {
	t.Helper()
	st, body := env.GraphQL(domain, token, hookUpsert, map[string]any{"v": values})
	if msg, _ := servertest.FirstError(body); st != http.StatusOK || msg != "" {
		t.Fatalf("upsert %v: %d %s", values, st, jsonText(body))
	}
	return body["data"].(map[string]any)["upsert"].([]any)[0].(map[string]any)["id"].(string)
}

// TestEventHookDelivery: an EventHook posts the changes of an instance's
// records to a real receiver, which checks every signature with the
// Standard Webhooks algorithm; while the receiver answers 500 the changes
// are tried again, and once it recovers they arrive, in order per record;
// the delivery log shows both; the secret is never returned and kept
// sealed. Runs on both stores.
func TestEventHookDelivery(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	token := hookInstance(t, env, "hooks.test")
	rcv := hooktest.Start(t)

	// Bad input is refused, naming the field; nothing is stored.
	for _, tc := range []struct {
		hook map[string]any
		want string
	}{
		{map[string]any{"url": rcv.URL, "secret": "nope"}, "secret must begin with whsec_"},
		{map[string]any{"url": rcv.URL, "secret": "whsec_c2hvcnQ="}, "24 to 64 bytes"},
		{map[string]any{"url": "ftp://x.example", "secret": rcv.Secret}, "url must be an absolute http or https URL"},
		{map[string]any{"url": rcv.URL, "secret": rcv.Secret, "operations": []any{"EXPLODED"}}, "is not an operation"},
		{map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Nope"}}, "is not a record type"},
		{map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Note"}, "arcql": "missing = 'x'"}, "arcql on Note"},
		{map[string]any{"url": rcv.URL}, "secret"},
	} {
		st, body := env.GraphQL("hooks.test", token, hookUpsert, map[string]any{"v": map[string]any{"EventHook": tc.hook}})
		if msg, _ := servertest.FirstError(body); st == http.StatusOK && msg == "" || !strings.Contains(msg, tc.want) {
			t.Errorf("upsert %v: %d %q, want an error with %q", tc.hook, st, msg, tc.want)
		}
	}

	hookID := upsertOK(t, env, "hooks.test", token, map[string]any{"EventHook": map[string]any{
		"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Note"}, "operations": []any{"CREATED", "UPDATED", "DELETED"}}})

	// The secret is kept sealed and never answered.
	rec, err := env.Store.Get(context.Background(), instanceID(t, env, "hooks.test"), hooks.Type, hookID)
	if err != nil {
		t.Fatal(err)
	}
	if sealed, _ := rec.Fields["secret"].(string); sealed == "" || strings.Contains(sealed, strings.TrimPrefix(rcv.Secret, "whsec_")) {
		t.Errorf("the stored secret %q is not sealed", sealed)
	}
	st, body := env.GraphQL("hooks.test", token, `{ get(type: EventHook, id: "`+hookID+`") { ... on EventHook { url secret } } }`, nil)
	if msg, _ := servertest.FirstError(body); st != http.StatusBadRequest || !strings.Contains(msg, "secret") {
		t.Errorf("reading the secret answered %d %s, want a 400 naming the field", st, jsonText(body))
	}

	// The receiver is down: changes are tried again, not lost.
	rcv.Fail.Store(true)
	a := upsertOK(t, env, "hooks.test", token, map[string]any{"Note": map[string]any{"text": "a1"}})
	upsertOK(t, env, "hooks.test", token, map[string]any{"Note": map[string]any{"core": map[string]any{"id": a}, "text": "a2"}})
	b := upsertOK(t, env, "hooks.test", token, map[string]any{"Note": map[string]any{"text": "b1"}})
	if st, body := env.GraphQL("hooks.test", token, `mutation { trash(type: Note, arcql: "text = 'b1'") }`, nil); st != http.StatusOK {
		t.Fatalf("trash: %d %s", st, jsonText(body)) // TRASHED: not an operation the hook takes
	}
	if st, body := env.GraphQL("hooks.test", token, `mutation { delete(type: Note, arcql: "core.id = '`+a+`'") }`, nil); st != http.StatusOK {
		t.Fatalf("delete: %d %s", st, jsonText(body))
	}
	rcv.WaitFor(t, "two failed posts", func(r *hooktest.Receiver) bool { _, failed, _ := r.Posts(); return failed >= 2 })
	rcv.Fail.Store(false)
	rcv.WaitFor(t, "four events", func(r *hooktest.Receiver) bool { return len(r.Events()) >= 4 })

	if _, _, bad := rcv.Posts(); len(bad) > 0 {
		t.Errorf("posts with bad signatures: %v", bad)
	}
	perRecord := map[string][]string{}
	for _, e := range rcv.Events() {
		if e.Instance != "hooks.test" || e.Type != "Note" || e.Timestamp == "" {
			t.Errorf("event %+v: want instance hooks.test, type Note, a timestamp", e)
		}
		text, _ := e.Node["text"].(string)
		core, _ := e.Node["core"].(map[string]any)
		if e.Op == "DELETED" && e.Node != nil || e.Node != nil && (core == nil || core["id"] != e.Record) {
			t.Errorf("event %+v: node does not fit", e)
		}
		name := map[string]string{a: "a", b: "b"}[e.Record]
		perRecord[name] = append(perRecord[name], e.Op+" "+text)
	}
	// In each record's order (the feed's); the node is the record when
	// posted: a was deleted by then (null), b is there.
	got := fmt.Sprint(perRecord)
	if want := fmt.Sprint(map[string][]string{"a": {"CREATED ", "UPDATED ", "DELETED "}, "b": {"CREATED b1"}}); got != want {
		t.Errorf("events per record %s, want %s", got, want)
	}

	// The delivery log: the failures, then the successes.
	st, body = env.Admin(http.MethodGet, "/instances/hooks.test/hooks", nil)
	list, _ := body["hooks"].([]any)
	if st != http.StatusOK || len(list) != 1 {
		t.Fatalf("GET hooks: %d %s", st, jsonText(body))
	}
	if strings.Contains(jsonText(body), strings.TrimPrefix(rcv.Secret, "whsec_")) {
		t.Errorf("the admin API shows the secret: %s", jsonText(body))
	}
	poll.Until(t, "the delivery log holds the four deliveries", func() bool {
		_, body = env.Admin(http.MethodGet, "/instances/hooks.test/hooks", nil)
		state, _ := body["hooks"].([]any)[0].(map[string]any)["state"].(map[string]any)
		d, _ := state["delivered"].(float64)
		return d >= 4 && state["cursor"].(float64) > 0 && state["attempt"] == nil
	})
	state := body["hooks"].([]any)[0].(map[string]any)["state"].(map[string]any)
	log := state["log"].([]any)
	first, last := log[0].(map[string]any), log[len(log)-1].(map[string]any)
	if first["status"] != float64(500) || first["error"] == nil || first["response"] == "" || first["attempt"] != float64(1) {
		t.Errorf("first attempt %v: want a 500 with its error and response", first)
	}
	if last["status"] != float64(200) || last["error"] != nil || last["op"] != "DELETED" {
		t.Errorf("last attempt %v: want the DELETED delivered", last)
	}
	if state["failed"].(float64) < 2 || state["lastError"] == "" {
		t.Errorf("state %v: want the failures counted and the last error kept", state)
	}

	// Deleting the instance removes what the store kept of its hooks.
	inst := instanceID(t, env, "hooks.test")
	if st, body := env.Admin(http.MethodDelete, "/instances/hooks.test", nil); st != http.StatusOK {
		t.Fatalf("deleting the instance: %d %s", st, jsonText(body))
	}
	for _, kind := range []string{"hooked", "hookstate", "hooklease"} {
		docs, err := env.Store.ListDocs(context.Background(), kind)
		if err != nil {
			t.Fatal(err)
		}
		for key := range docs {
			if strings.HasPrefix(key, inst) {
				t.Errorf("after the instance's deletion the store keeps %s %s", kind, key)
			}
		}
	}
}

// instanceID returns the id of the instance on domain.
func instanceID(t *testing.T, env *servertest.Env, domain string) string {
	t.Helper()
	inst, err := env.Directory.Instance(domain)
	if err != nil {
		t.Fatal(err)
	}
	return inst.ID
}

// TestEventHookRefusedAndDisabled: without AllowPrivate a hook may not
// post to loopback; a hook that keeps failing past RetryFor is disabled,
// with its last error on the record.
func TestEventHookRefusedAndDisabled(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t, servertest.WithHooks(hooks.Config{Scan: 100 * time.Millisecond,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, RetryFor: 300 * time.Millisecond}))
	token := hookInstance(t, env, "private.test")
	rcv := hooktest.Start(t)
	id := upsertOK(t, env, "private.test", token, map[string]any{"EventHook": map[string]any{"url": rcv.URL, "secret": rcv.Secret}})
	upsertOK(t, env, "private.test", token, map[string]any{"Note": map[string]any{"text": "x"}})
	var node map[string]any
	poll.Until(t, "the hook disabled", func() bool {
		_, body := env.GraphQL("private.test", token, `{ get(type: EventHook, id: "`+id+`") { ... on EventHook { enabled lastError } } }`, nil)
		node, _ = body["data"].(map[string]any)["get"].(map[string]any)
		return node != nil && node["enabled"] == false
	})
	if msg, _ := node["lastError"].(string); !strings.Contains(msg, "not a public address") {
		t.Errorf("lastError %q: want the refused address named", msg)
	}
	if acc, failed, bad := rcv.Posts(); acc+failed+len(bad) != 0 {
		t.Errorf("the receiver on loopback got posts: %d %d %v", acc, failed, bad)
	}
}

// TestEventHookBound: an instance may have hooks.MaxHooks event hooks
// (the service delivers that many): one more is refused, naming the
// bound, and nothing of it is kept; the hooks there may still change.
func TestEventHookBound(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	token := hookInstance(t, env, "bound.test")
	secret := "whsec_" + strings.Repeat("A", 32)
	many := make([]any, hooks.MaxHooks)
	for i := range many {
		many[i] = map[string]any{"url": fmt.Sprintf("https://example.com/%d", i), "secret": secret}
	}
	first := upsertOK(t, env, "bound.test", token, map[string]any{"EventHook": many})
	st, body := env.GraphQL("bound.test", token, hookUpsert, map[string]any{"v": map[string]any{"EventHook": map[string]any{"url": "https://example.com/one-more", "secret": secret}}})
	if msg, code := servertest.FirstError(body); code != "BAD_REQUEST" || !strings.Contains(msg, fmt.Sprintf("has %d event hooks, as many as it may have", hooks.MaxHooks)) {
		t.Errorf("hook %d: %d %s, want BAD_REQUEST naming the bound", hooks.MaxHooks+1, st, jsonText(body))
	}
	_, body = env.GraphQL("bound.test", token, `{ aggregate { eventHook { core { count } } } }`, nil)
	if n := jsonText(body["data"]); !strings.Contains(n, fmt.Sprintf(`"count":%d`, hooks.MaxHooks)) {
		t.Errorf("the instance's hooks after the refusal: %s, want %d", n, hooks.MaxHooks)
	}
	upsertOK(t, env, "bound.test", token, map[string]any{"EventHook": map[string]any{"core": map[string]any{"id": first}, "enabled": false}})
}

// TestEventHookSessionsMayNotWrite: a user session cannot write an
// EventHook (it would see every record of the instance), even with an
// SBP grant on the type; nothing is stored.
func TestEventHookSessionsMayNotWrite(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	token := hookInstance(t, env, "session.test")
	accountID := upsertOK(t, env, "session.test", token, map[string]any{"Account": map[string]any{"username": "ada", "password": map[string]any{"value": "correct horse battery"}}})
	upsertOK(t, env, "session.test", token, map[string]any{"AccessRight": map[string]any{"resource": "*", "resourceType": "EventHook",
		"operationType": "*", "operation": "*", "permissionType": "SBP", "members": []any{map[string]any{"core": map[string]any{"id": accountID}}}}})
	st, body := env.GraphQL("session.test", "", `{ login(username: "ada", password: "correct horse battery") { sessionToken } }`, nil)
	login, _ := body["data"].(map[string]any)["login"].(map[string]any)
	session, _ := login["sessionToken"].(string)
	if st != http.StatusOK || session == "" {
		t.Fatalf("login: %d %s", st, jsonText(body))
	}
	st, body = env.GraphQL("session.test", session, hookUpsert, map[string]any{"v": map[string]any{"EventHook": map[string]any{"url": "https://example.com", "secret": "whsec_" + strings.Repeat("A", 32)}}})
	if msg, code := servertest.FirstError(body); code != "FORBIDDEN" || !strings.Contains(msg, "instance token only") {
		t.Errorf("a session's EventHook upsert answered %d %s, want FORBIDDEN naming the rule", st, jsonText(body))
	}
	st, body = env.GraphQL("session.test", token, `{ find(type: EventHook, arcql: "*") { edges { cursor } } }`, nil)
	if data, _ := body["data"].(map[string]any); st != http.StatusOK || fmt.Sprint(data["find"]) != "map[edges:[]]" {
		t.Errorf("after the refused upsert: %d %s, want no hook", st, jsonText(body))
	}
}

// TestEventHookTwoProcesses: two servers on one MongoDB database, as two
// cored processes, deliver each change once between them.
func TestEventHookTwoProcesses(t *testing.T) {
	t.Parallel()
	stores := mongotest.Shared(t, 2)
	a := servertest.Start(t, servertest.WithStore(stores[0]))
	b := servertest.Start(t, servertest.WithStore(stores[1]))
	token := hookInstance(t, a, "two.test")
	poll.Until(t, "the second server knows the instance", func() bool { _, ok := b.Directory.Lookup("two.test"); return ok })
	rcv := hooktest.Start(t)
	upsertOK(t, a, "two.test", token, map[string]any{"EventHook": map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Note"}}})
	const n = 60
	for i := range n {
		env := a
		if i%2 == 1 {
			env = b
		}
		upsertOK(t, env, "two.test", token, map[string]any{"Note": map[string]any{"text": "n"}})
	}
	rcv.WaitFor(t, "every note", func(r *hooktest.Receiver) bool { return len(r.Events()) >= n })
	// Both go on running for a while: a second delivery would show.
	_ = upsertOK(t, b, "two.test", token, map[string]any{"Note": map[string]any{"text": "last"}})
	rcv.WaitFor(t, "the last note", func(r *hooktest.Receiver) bool { return len(r.Events()) == n+1 })
	if acc, _, _ := rcv.Posts(); acc != n+1 {
		t.Errorf("%d posts accepted for %d changes: some were delivered twice", acc, n+1)
	}
	// A worker counts a post once its answer is in, which may be just
	// after the receiver has it.
	delivered := func() uint64 { return a.Hooks.Stats().Delivered + b.Hooks.Stats().Delivered }
	poll.Until(t, "the processes to count every post", func() bool { return delivered() >= n+1 })
	if d := delivered(); d != n+1 {
		t.Errorf("the processes delivered %d posts, want %d", d, n+1)
	}
}

// TestEventHookHeldFeed: while a hook's endpoint fails, the change feed
// keeps every change after the hook's cursor past retention (here the
// newest 3), so that once the endpoint recovers every change arrives,
// each once. Runs on both stores.
func TestEventHookHeldFeed(t *testing.T) {
	t.Parallel()
	small := store.Retention{Count: 3}
	var st store.Store
	if servertest.Kind() == servertest.KindMongo {
		st = mongotest.Open(t, func(c *mongo.Config) { c.Retention = small })
	} else {
		st = bolttest.OpenAt(t, filepath.Join(t.TempDir(), "core.db"), func(c *bolt.Config) { c.Retention = small })
	}
	t.Cleanup(func() { st.Close() })
	env := servertest.Start(t, servertest.WithStore(st))
	token := hookInstance(t, env, "held.test")
	rcv := hooktest.Start(t)
	upsertOK(t, env, "held.test", token, map[string]any{"EventHook": map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Note"}}})

	rcv.Fail.Store(true)
	upsertOK(t, env, "held.test", token, map[string]any{"Note": map[string]any{"text": "0"}})
	// A worker sets the hold at the end of each pass: the second failed
	// post comes from a pass after the first.
	rcv.WaitFor(t, "two failed posts", func(r *hooktest.Receiver) bool { _, failed, _ := r.Posts(); return failed >= 2 })
	const n = 30
	for i := 1; i < n; i++ {
		upsertOK(t, env, "held.test", token, map[string]any{"Note": map[string]any{"text": fmt.Sprint(i)}})
	}
	rcv.Fail.Store(false)
	rcv.WaitFor(t, "every note", func(r *hooktest.Receiver) bool { return len(r.Events()) >= n })
	// Records' changes are posted in parallel: every one once, any order.
	seen := map[string]int{}
	for _, e := range rcv.Events() {
		text, _ := e.Node["text"].(string)
		if e.Op != "CREATED" {
			t.Errorf("event %s %q, want CREATED", e.Op, text)
		}
		seen[text]++
	}
	for i := range n {
		if seen[fmt.Sprint(i)] != 1 {
			t.Errorf("note %d arrived %d times, want once", i, seen[fmt.Sprint(i)])
		}
	}
}
