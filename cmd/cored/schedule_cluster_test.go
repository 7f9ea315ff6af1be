package main

import (
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/poll"

	"github.com/corehq/core/schedule"
)

// scheduleApp has a mutation bound to a function that stores a Tick
// record each time it runs, through the instance's GraphQL API.
var scheduleApp = map[string]string{
	"schema.graphql": `type Tick { tag: String }
type Mutation { tick(id: String, arcql: String, type: String): Boolean @fn(name: "tick", version: "v1") }
`,
	"functions/tick.js": `exports.main = async function (input, callback) {
  const res = await core.graphql('mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }',
    { v: { Tick: [{ tag: input.args.id + ' ' + input.args.type }] } });
  if (res.errors) { callback(null, { code: 'STORE_FAILED', message: res.errors[0].message }); return; }
  callback(true, null);
};
`,
	"app.yaml": `app: ticks
release: v1
schema: schema.graphql
functions:
  tick:
    v1: functions/tick.js
instances:
  - domain: ticks.test
`,
}

// TestScheduledTicksOnceAcrossProcesses: two cored processes on one
// MongoDB-wire server run a one-minute schedule on the real clock; over
// three ticks the function ran exactly as many times as ticks were
// claimed (each tick once between the two processes), in order, each run
// recorded on the ScheduledFunction record. The test takes three minutes
// of wall time and asserts counts and order, not durations.
func TestScheduledTicksOnceAcrossProcesses(t *testing.T) {
	t.Parallel()
	const admin = "schedule-test-admin-token-0123456789"
	mongoURI, keys := mongoURL(t), newKeyFile(t)
	a := startServe(t, "--mongo-uri", mongoURI, "--key-file", keys, "--admin-token", admin)
	b := startServe(t, "--mongo-uri", mongoURI, "--key-file", keys, "--admin-token", admin)
	appDir := t.TempDir()
	writeFiles(t, appDir, scheduleApp)
	code, out, errOut := runCmd(t, env(map[string]string{"CORE_ADMIN_TOKEN": admin}), "deploy", "--server", "http://"+a.addr, appDir)
	if code != 0 {
		t.Fatalf("deploy: exit %d\n%s%s", code, out, errOut)
	}
	var token string
	for _, line := range strings.Split(out, "\n") {
		if m := createdRE.FindStringSubmatch(line); m != nil {
			token = m[3]
		}
	}
	h := map[string]string{"core-domain": "ticks.test", "authorization": token}
	gq := func(p *coredProcess, query string, vars map[string]any) map[string]any {
		t.Helper()
		st, body := p.call(t, "POST", "/graphql", h, map[string]any{"query": query, "variables": vars})
		if st != 200 || body["errors"] != nil {
			t.Fatalf("%s: %d %v", query, st, body)
		}
		return body["data"].(map[string]any)
	}
	poll.Until(t, "b serves the instance", func() bool {
		st, _ := b.call(t, "POST", "/graphql", h, map[string]any{"query": `{ __typename }`})
		return st == 200
	})

	// A one-minute interval is the shortest: below it is refused.
	st, body := a.call(t, "POST", "/graphql", h, map[string]any{"query": `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		"variables": map[string]any{"v": map[string]any{"ScheduledFunction": map[string]any{
			"fn": map[string]any{"type": "Mutation", "field": "tick"}, "interval": "MINUTE", "intervalFrequency": 0}}}})
	if errs, _ := body["errors"].([]any); st != 200 || len(errs) == 0 || !strings.Contains(errs[0].(map[string]any)["message"].(string), "one minute") {
		t.Fatalf("an interval below a minute: %d %v", st, body)
	}

	d := gq(a, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"ScheduledFunction": map[string]any{
			"fn": map[string]any{"type": "Mutation", "field": "tick"}, "interval": "MINUTE", "id": "s1", "type": "Tick"}}})
	id := d["upsert"].([]any)[0].(map[string]any)["id"].(string)
	d = gq(a, `query($id: String!) { get(type: ScheduledFunction, id: $id) { ... on ScheduledFunction { nextExecution } } }`, map[string]any{"id": id})
	first, err := schedule.ParseTime(d["get"].(map[string]any)["nextExecution"])
	if err != nil {
		t.Fatalf("nextExecution of the new schedule: %v", err)
	}

	type view struct {
		claimed   int // ticks moved past (nextExecution - first, in minutes)
		lastRun   time.Time
		succeeded bool
		lastError any
		ticks     int
	}
	read := func(p *coredProcess) view {
		t.Helper()
		d := gq(p, `query($id: String!) { get(type: ScheduledFunction, id: $id) { ... on ScheduledFunction { lastExecuted nextExecution lastExecutionSucceeded lastExecutionError } } }`,
			map[string]any{"id": id})
		s := d["get"].(map[string]any)
		var v view
		if next, err := schedule.ParseTime(s["nextExecution"]); err == nil {
			v.claimed = int((next.Sub(first) + 30*time.Second) / time.Minute)
		}
		v.lastRun, _ = schedule.ParseTime(s["lastExecuted"])
		v.succeeded, _ = s["lastExecutionSucceeded"].(bool)
		v.lastError = s["lastExecutionError"]
		d = gq(p, `{ find(type: Tick, arcql: "*", first: 100) { edges { node { ... on Tick { tag } } } } }`, nil)
		for _, e := range d["find"].(map[string]any)["edges"].([]any) {
			if tag := e.(map[string]any)["node"].(map[string]any)["tag"]; tag != "s1 Tick" {
				t.Errorf("a run got the arguments %v, want id s1 and type Tick", tag)
			}
			v.ticks++
		}
		return v
	}
	// Wait (a generous limit: progress is what counts) until at least
	// three ticks were claimed and the last of them has run: then exactly
	// as many Tick records exist as ticks claimed, read between two equal
	// views of the schedule.
	var seen []int
	var final view
	deadline := time.Now().Add(8 * time.Minute)
	for done := false; !done; {
		if time.Now().After(deadline) {
			t.Fatalf("three ticks did not run within eight minutes; ticks claimed as seen: %v", seen)
		}
		time.Sleep(time.Second)
		done = func() bool {
			p := a
			if len(seen)%2 == 1 {
				p = b
			}
			v := read(p)
			if len(seen) == 0 || seen[len(seen)-1] != v.claimed {
				seen = append(seen, v.claimed)
			}
			if v.claimed < 3 || v.lastRun.Before(first.Add(time.Duration(v.claimed-1)*time.Minute)) || !v.succeeded {
				return false
			}
			again := read(p)
			if again.claimed != v.claimed || again.ticks != v.ticks {
				return false // a tick began meanwhile: look again
			}
			final = v
			return true
		}()
	}
	if final.ticks != final.claimed {
		t.Errorf("%d runs of %d ticks (each tick must run once between the two processes)", final.ticks, final.claimed)
	}
	if final.lastError != nil {
		t.Errorf("lastExecutionError %v", final.lastError)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Errorf("nextExecution went back: %v", seen)
		}
	}
	t.Logf("%d ticks, %d runs; ticks claimed as seen: %v", final.claimed, final.ticks, seen)
}
