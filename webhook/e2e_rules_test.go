package webhook_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// rulesSDL is a task board with @access rules: a Task is readable and may
// be created by the colleagues of its board's team and by the board's
// creator. ask runs any document through core.graphql as its caller; run,
// a webhook's field, runs the document and variables its body names as the
// webhook's account.
const rulesSDL = `
type Team { name: String colleagues: [Account] }
type Board { title: String team: Team }
type Task @access(
  read: "board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller"
  create: "board.team.colleagues.core.id = $caller OR board.core.createdBy = $caller"
  update: "board.core.createdBy = $caller"
) {
  title: String
  board: Board
}
type Query {
  ask(doc: String!, vars: Json): Json @fn(name: "ask", version: "v1")
}
type Mutation {
  run(payload: WebhookPayload): WebhookResponse @fn(name: "run", version: "v1")
}`

var rulesFunctions = map[string]string{
	"ask": `exports.main = async (input) => core.graphql(input.args.doc, input.args.vars);`,
	"run": `exports.main = async (input) => {
		const req = JSON.parse(JSON.parse(input.args.payload).body);
		return { status: 200, body: await core.graphql(req.doc, req.vars) };
	};`,
}

const (
	rulesFind   = `{ find(type: Task, arcql: "*") { edges { node { ... on Task { title } } } } }`
	rulesProbe  = `{ find(type: Task, arcql: "board.title = 'alpha'") { edges { node { ... on Task { title } } } } }`
	rulesGet    = `query($id: String!) { get(type: Task, id: $id) { ... on Task { title } } }`
	rulesCount  = `{ aggregate { task { core { count } } } }`
	rulesUpsert = `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`
)

// TestRulesHoldInFunctionsAndWebhooks: a function's core.graphql runs as
// the account whose session called the function, and a webhook's function
// as the webhook's account, so the type's @access rules decide what they
// read and create exactly as they would for that account at /graphql:
// carol's function finds, gets, counts and probes nothing of alice's board
// and cannot create a task on it; bob's reads alice's task through the
// rule and creates on her board, not on carol's; a webhook as bob creates
// a task on alice's board and not on carol's, and a webhook as carol reads
// only her own tasks.
func TestRulesHoldInFunctionsAndWebhooks(t *testing.T) {
	t.Parallel()
	cfg := fn.DefaultConfig()
	cfg.Timeout = time.Minute // generous: the outcome matters, not the time
	env := servertest.Start(t, servertest.WithFunctionConfig(cfg))
	env.PutRelease("rules", "v1", rulesSDL)
	env.PublishFunctions("rules", rulesFunctions)
	token := env.CreateInstance("rules.test", "rules", "v1", tenant.Settings{AnonymousRequests: true})
	run := func(token, query string, vars map[string]any) map[string]any {
		t.Helper()
		return env.Data("rules.test", token, query, vars)
	}
	account := func(name string) (id, session string) {
		t.Helper()
		d := run(token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
			map[string]any{"v": map[string]any{"username": name, "password": map[string]any{"value": "correct horse battery"}}})
		id, _ = d["createAccount"].(map[string]any)["id"].(string)
		d = run("", `query($u: String!) { login(username: $u, password: "correct horse battery") { sessionToken } }`, map[string]any{"u": name})
		session, _ = d["login"].(map[string]any)["sessionToken"].(string)
		if id == "" || session == "" {
			t.Fatalf("%s's account and session: %q %q", name, id, session)
		}
		return id, session
	}
	ref := func(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}} }
	upsertOne := func(token, typ string, v map[string]any) string {
		t.Helper()
		d := run(token, rulesUpsert, map[string]any{"v": map[string]any{typ: v}})
		id, _ := d["upsert"].([]any)[0].(map[string]any)["id"].(string)
		return id
	}
	_, alice := account("alice")
	bobID, bob := account("bob")
	carolID, carol := account("carol")
	team := upsertOne(alice, "Team", map[string]any{"name": "alpha team", "colleagues": []any{ref(bobID)}})
	alpha := upsertOne(alice, "Board", map[string]any{"title": "alpha", "team": ref(team)})
	gamma := upsertOne(carol, "Board", map[string]any{"title": "gamma"})
	aliceTask := upsertOne(alice, "Task", map[string]any{"title": "alice on alpha", "board": ref(alpha)})
	upsertOne(carol, "Task", map[string]any{"title": "carol on gamma", "board": ref(gamma)})
	newTask := func(title, board string) map[string]any {
		return map[string]any{"v": map[string]any{"Task": map[string]any{"title": title, "board": ref(board)}}}
	}

	// The answers of core.graphql and of a webhook are GraphQL responses.
	titles := func(res map[string]any) []string {
		t.Helper()
		out := []string{}
		edges, ok := path(res, "data", "find", "edges").([]any)
		if !ok {
			t.Fatalf("not a find's answer: %s", dump(res))
		}
		for _, e := range edges {
			out = append(out, path(e, "node", "title").(string))
		}
		slices.Sort(out)
		return out
	}
	refused := func(res map[string]any) string {
		errs, _ := res["errors"].([]any)
		if len(errs) == 0 {
			return ""
		}
		msg, _ := path(errs[0], "message").(string)
		code, _ := path(errs[0], "extensions", "code").(string)
		return code + " " + msg
	}
	const byCreateRule = "FORBIDDEN … the create rule of Task does not allow this record"
	createRuleRefused := func(got string) bool {
		return strings.HasPrefix(got, "FORBIDDEN ") && strings.Contains(got, "the create rule of Task does not allow this record")
	}
	ask := func(session, doc string, vars map[string]any) map[string]any {
		t.Helper()
		got, _ := run(session, `query($d: String!, $v: Json) { ask(doc: $d, vars: $v) }`, map[string]any{"d": doc, "v": vars})["ask"].(map[string]any)
		return got
	}
	hook := func(name, doc string, vars map[string]any) map[string]any {
		t.Helper()
		res, out := env.DoRaw(http.MethodPost, "/webhook/rules.test/"+name, map[string]string{"Content-Type": "application/json"},
			map[string]any{"doc": doc, "vars": vars})
		var got map[string]any
		if res.StatusCode != http.StatusOK || json.Unmarshal(out, &got) != nil {
			t.Fatalf("webhook %s: %d %s", name, res.StatusCode, out)
		}
		return got
	}

	t.Run("a function called by carol's session", func(t *testing.T) {
		if got := titles(ask(carol, rulesFind, nil)); !slices.Equal(got, []string{"carol on gamma"}) {
			t.Errorf("carol's function finds %v, want only her own task", got)
		}
		if got := titles(ask(carol, rulesProbe, nil)); len(got) != 0 {
			t.Errorf("carol's function probing alice's board finds %v, want nothing", got)
		}
		if got := ask(carol, rulesGet, map[string]any{"id": aliceTask}); path(got, "data", "get") != nil {
			t.Errorf("carol's function gets alice's task: %s", dump(got))
		}
		if got := ask(carol, rulesCount, nil); path(got, "data", "aggregate", "task", "core", "count") != float64(1) {
			t.Errorf("carol's function counts %s, want her one task", dump(got))
		}
		if got := refused(ask(carol, rulesUpsert, newTask("carol on alpha", alpha))); !createRuleRefused(got) {
			t.Errorf("carol's function creating a task on alice's board: %q, want %q", got, byCreateRule)
		}
		if got := refused(ask(carol, rulesUpsert, map[string]any{"v": map[string]any{"Task": map[string]any{"core": map[string]any{"id": aliceTask}, "title": "carol's now"}}})); !strings.HasPrefix(got, "FORBIDDEN") {
			t.Errorf("carol's function changing alice's task: %q, want FORBIDDEN", got)
		}
	})
	t.Run("a function called by bob's session", func(t *testing.T) {
		if got := titles(ask(bob, rulesFind, nil)); !slices.Equal(got, []string{"alice on alpha"}) {
			t.Errorf("bob's function finds %v, want alice's task (the read rule, through her team)", got)
		}
		if got := refused(ask(bob, rulesUpsert, newTask("bob's fn on alpha", alpha))); got != "" {
			t.Errorf("bob's function creating a task on alice's board: %s", got)
		}
		if got := refused(ask(bob, rulesUpsert, newTask("bob's fn on gamma", gamma))); !createRuleRefused(got) {
			t.Errorf("bob's function creating a task on carol's board: %q, want %q", got, byCreateRule)
		}
	})

	run(token, rulesUpsert, map[string]any{"v": map[string]any{"Webhook": []any{
		map[string]any{"name": "asbob", "as": ref(bobID), "query": map[string]any{"type": "Mutation", "field": "run"}},
		map[string]any{"name": "ascarol", "as": ref(carolID), "query": map[string]any{"type": "Mutation", "field": "run"}},
	}}})
	t.Run("a webhook as bob", func(t *testing.T) {
		if got := refused(hook("asbob", rulesUpsert, newTask("bob's hook on alpha", alpha))); got != "" {
			t.Errorf("the webhook as bob creating a task on alice's board: %s", got)
		}
		if got := refused(hook("asbob", rulesUpsert, newTask("bob's hook on gamma", gamma))); !createRuleRefused(got) {
			t.Errorf("the webhook as bob creating a task on carol's board: %q, want %q", got, byCreateRule)
		}
		want := []string{"alice on alpha", "bob's fn on alpha", "bob's hook on alpha"}
		if got := titles(hook("asbob", rulesFind, nil)); !slices.Equal(got, want) {
			t.Errorf("the webhook as bob finds %v, want %v", got, want)
		}
	})
	t.Run("a webhook as carol", func(t *testing.T) {
		if got := titles(hook("ascarol", rulesFind, nil)); !slices.Equal(got, []string{"carol on gamma"}) {
			t.Errorf("the webhook as carol finds %v, want only her own task", got)
		}
		if got := hook("ascarol", rulesGet, map[string]any{"id": aliceTask}); path(got, "data", "get") != nil {
			t.Errorf("the webhook as carol gets alice's task: %s", dump(got))
		}
		if got := refused(hook("ascarol", rulesUpsert, newTask("carol's hook on alpha", alpha))); !createRuleRefused(got) {
			t.Errorf("the webhook as carol creating a task on alice's board: %q, want %q", got, byCreateRule)
		}
	})

	// What the doors wrote, as alice and the instance token see it: the
	// tasks bob's function and webhook created are on alice's board and
	// his; nothing reached carol's board but her own task.
	want := []string{"alice on alpha", "bob's fn on alpha", "bob's hook on alpha", "carol on gamma"}
	if got := titles(map[string]any{"data": run(token, rulesFind, nil)}); !slices.Equal(got, want) {
		t.Errorf("the instance's tasks: %v, want %v", got, want)
	}
	d := run(token, `{ find(type: Task, arcql: "core.createdBy = '`+bobID+`'") { edges { node { ... on Task { title board { title } } } } } }`, nil)
	for _, e := range path(d, "find", "edges").([]any) {
		if b := path(e, "node", "board", "title"); b != "alpha" {
			t.Errorf("bob's task %v is on board %v, want alpha", path(e, "node", "title"), b)
		}
	}
}

// path walks nested maps by keys; nil when a step is missing.
func path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
