package webhook_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

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
	for name, src := range callsBack {
		res, body := env.DoRaw(http.MethodPut, "/admin/v1/apps/calls/functions/"+name+"/v1", env.AdminHeaders(), []byte(src))
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated {
			t.Fatalf("publishing %s: %d %s", name, res.StatusCode, body)
		}
	}
	token := env.CreateInstance("calls.test", "calls", "v1", tenant.Settings{AnonymousRequests: true})
	run := func(token, query string, vars map[string]any) map[string]any {
		t.Helper()
		status, body := env.GraphQL("calls.test", token, query, vars)
		if status != http.StatusOK || body["errors"] != nil {
			t.Fatalf("%s: %d %s", query, status, dump(body))
		}
		d, _ := body["data"].(map[string]any)
		return d
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
