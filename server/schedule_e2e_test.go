package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/schedule"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

const scheduleSDL = `type Tick { tag: String }
type Mutation {
  tick(id: String, type: String): Boolean @fn(name: "tick", version: "v1")
  unbound(id: String): Boolean
}
`

// scheduleTick stores a Tick through the instance's API, as the call's
// account, tagged with its arguments.
const scheduleTick = `exports.main = async function (input, callback) {
  const res = await core.graphql('mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }',
    { v: { Tick: [{ tag: input.args.id + ' ' + input.args.type }] } });
  if (res.errors) { callback(null, { code: 'STORE_FAILED', message: res.errors[0].message }); return; }
  callback(true, null);
};`

// TestScheduledFunctions: a ScheduledFunction's writes are checked (bad
// input refused with the field named, the instance token only, the
// service's fields refused); a scheduler with an injected clock runs it
// through the real engine and function runtime at its tick with its
// arguments, records the outcome on the record, and a run past the
// instance's function quota fails and says so. Runs on both stores.
func TestScheduledFunctions(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("sched", "v1", scheduleSDL)
	if res, raw := env.DoRaw(http.MethodPut, "/admin/v1/apps/sched/functions/tick/v1", env.AdminHeaders(), []byte(scheduleTick)); res.StatusCode >= 300 {
		t.Fatalf("publishing: %d %s", res.StatusCode, raw)
	}
	token := env.CreateInstance("sched.test", "sched", "v1", tenant.Settings{Quota: tenant.Quota{FunctionCallsPerDay: 2}})
	tick := map[string]any{"type": "Mutation", "field": "tick"}

	for _, tc := range []struct {
		v    map[string]any
		want string
	}{
		{map[string]any{"fn": tick, "interval": "MINUTE", "intervalFrequency": 0}, "the shortest interval is one minute"},
		{map[string]any{"fn": tick, "intervalFrequency": -5}, "intervalFrequency"},
		{map[string]any{"fn": map[string]any{"type": "Mutation", "field": "unbound"}}, "not bound to a function"},
		{map[string]any{"fn": map[string]any{"type": "Mutation", "field": "nope"}}, "not a field of the schema"},
		{map[string]any{"fn": map[string]any{"type": "Subscription", "field": "tick"}}, "a Query or a Mutation field"},
		{map[string]any{"fn": tick, "nextExecution": "2026-01-01T00:00:00Z"}, "nextExecution: written by the service only"},
		{map[string]any{"fn": tick, "lastExecutionSucceeded": true}, "written by the service only"},
		{map[string]any{"fn": tick, "type": "Nope"}, "is not a record type"},
		{map[string]any{"fn": tick, "type": "Tick", "arcql": "missing = 1"}, "arcql"},
		{map[string]any{"fn": tick, "start": "2026-02-01T00:00:00Z", "end": "2026-01-01T00:00:00Z"}, "end: before start"},
	} {
		st, body := env.GraphQL("sched.test", token, hookUpsert, map[string]any{"v": map[string]any{"ScheduledFunction": tc.v}})
		if msg, _ := servertest.FirstError(body); st == http.StatusOK && msg == "" || !strings.Contains(msg, tc.want) {
			t.Errorf("upsert %v: %d %q, want an error with %q", tc.v, st, msg, tc.want)
		}
	}
	st, body := env.GraphQL("sched.test", token, `{ find(type: ScheduledFunction, arcql: "*") { edges { cursor } } }`, nil)
	if edges := body["data"].(map[string]any)["find"].(map[string]any)["edges"].([]any); st != http.StatusOK || len(edges) != 0 {
		t.Fatalf("after the refused writes: %d %s", st, jsonText(body))
	}

	// A session may not write one, even with a grant.
	accountID := upsertOK(t, env, "sched.test", token, map[string]any{"Account": map[string]any{"username": "ada", "password": map[string]any{"value": "correct horse battery"}}})
	upsertOK(t, env, "sched.test", token, map[string]any{"AccessRight": map[string]any{"resource": "*", "resourceType": "ScheduledFunction",
		"operationType": "*", "operation": "*", "permissionType": "SBP", "members": []any{map[string]any{"core": map[string]any{"id": accountID}}}}})
	_, body = env.GraphQL("sched.test", "", `{ login(username: "ada", password: "correct horse battery") { sessionToken } }`, nil)
	session, _ := body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)
	_, body = env.GraphQL("sched.test", session, hookUpsert, map[string]any{"v": map[string]any{"ScheduledFunction": map[string]any{"fn": tick}}})
	if msg, code := servertest.FirstError(body); code != "FORBIDDEN" || !strings.Contains(msg, "instance token only") {
		t.Errorf("a session's ScheduledFunction upsert answered %s, want FORBIDDEN", jsonText(body))
	}

	start := time.Now().UTC().Add(time.Hour).Truncate(time.Minute)
	id := upsertOK(t, env, "sched.test", token, map[string]any{"ScheduledFunction": map[string]any{
		"fn": tick, "start": start.Format(time.RFC3339), "interval": "MINUTE", "intervalFrequency": 2, "id": "r1", "type": "Tick"}})
	get := func() map[string]any {
		t.Helper()
		st, body := env.GraphQL("sched.test", token, `query($id: String!) { get(type: ScheduledFunction, id: $id) { ... on ScheduledFunction {
			nextExecution lastExecuted lastExecutionSucceeded lastExecutionError } } }`, map[string]any{"id": id})
		if st != http.StatusOK {
			t.Fatalf("get: %d %s", st, jsonText(body))
		}
		return body["data"].(map[string]any)["get"].(map[string]any)
	}
	if got := get(); got["nextExecution"] != schedule.FormatTime(start) || got["lastExecuted"] != nil {
		t.Fatalf("a new schedule: %v, want nextExecution %s", got, schedule.FormatTime(start))
	}

	var mu sync.Mutex
	now := start.Add(-time.Second)
	svc := schedule.New(env.Store, env.Directory.Instances, env.Engine, schedule.Config{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}, zap.NewNop())
	at := func(t0 time.Time) {
		t.Helper()
		mu.Lock()
		now = t0
		mu.Unlock()
		if err := svc.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ticks := func() []string {
		t.Helper()
		_, body := env.GraphQL("sched.test", token, `{ find(type: Tick, arcql: "*") { edges { node { ... on Tick { tag } } } } }`, nil)
		var tags []string
		for _, e := range body["data"].(map[string]any)["find"].(map[string]any)["edges"].([]any) {
			tags = append(tags, e.(map[string]any)["node"].(map[string]any)["tag"].(string))
		}
		return tags
	}
	at(start.Add(-time.Second))
	if got := ticks(); len(got) != 0 {
		t.Fatalf("ran before its start: %v", got)
	}
	at(start)
	if got := ticks(); len(got) != 1 || got[0] != "r1 Tick" {
		t.Fatalf("after the first tick: %v, want one Tick tagged r1 Tick", got)
	}
	got := get()
	if got["nextExecution"] != schedule.FormatTime(start.Add(2*time.Minute)) || got["lastExecuted"] != schedule.FormatTime(start) ||
		got["lastExecutionSucceeded"] != true || got["lastExecutionError"] != nil {
		t.Errorf("after the first run: %v", got)
	}

	// The quota (two function calls a day) counts scheduled runs: the
	// first tick's run and its callback are one call; the second run is
	// the second call; the third is refused and says why.
	at(start.Add(2 * time.Minute))
	at(start.Add(4 * time.Minute))
	got = get()
	if msg, _ := got["lastExecutionError"].(string); got["lastExecutionSucceeded"] != false || !strings.Contains(msg, "QUOTA_EXCEEDED") {
		t.Errorf("a run past the quota: %v", got)
	}
	if n := len(ticks()); n != 2 {
		t.Errorf("%d Ticks stored, want 2 (the third run refused)", n)
	}
	if runs, failed := svc.Stats(); runs != 3 || failed != 1 {
		t.Errorf("stats: %d runs, %d failed; want 3, 1", runs, failed)
	}
}
