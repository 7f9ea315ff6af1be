package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/internal/poll"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

const triggerSDL = `type Order @trigger(config: {before: {type: Query, field: "allow"}, after: {type: Mutation, field: "audit"}}) {
  item: String
}
type Audit { order: String  item: String  committed: Boolean }
type Loop @trigger(config: {after: {type: Mutation, field: "again"}}) { n: Int }
type Query { allow(values: Json, item: String): Boolean @fn(name: "allow", version: "v1") }
type Mutation {
  audit(values: Json, coreResult: Json): Boolean @fn(name: "audit", version: "v1")
  again(coreResult: Json): Boolean @fn(name: "again", version: "v1")
  place(item: String): String @fn(name: "place", version: "v1") @trigger(config: {before: {type: Query, field: "allow"}})
}
`

var triggerFunctions = map[string]string{
	// allow refuses what mentions "forbidden", fails on "boom".
	"allow": `exports.main = (input, cb) => {
  const text = JSON.stringify(input.args.values || null) + ' ' + (input.args.item || '');
  if (text.includes('boom')) { cb(null, { code: 'BOOM', message: 'the trigger blew up' }); return; }
  cb(!text.includes('forbidden'), null);
};`,
	// audit reads each written Order back (it must be committed) and
	// stores an Audit record of it, as the caller.
	"audit": `exports.main = async (input, cb) => {
  for (const rec of input.args.coreResult) {
    const got = await core.graphql('query($id: String!) { get(type: Order, id: $id) { ... on Order { item } } }', { id: rec.core.id });
    const committed = !got.errors && got.data.get !== null && got.data.get.item === rec.item;
    const res = await core.graphql('mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }',
      { v: { Audit: [{ order: rec.core.id, item: rec.item, committed }] } });
    if (res.errors) { cb(null, { code: 'STORE_FAILED', message: res.errors[0].message }); return; }
  }
  cb(true, null);
};`,
	// again writes another Loop: its own after trigger fires again,
	// until the depth bound stops it.
	"again": `exports.main = async (input, cb) => {
  const res = await core.graphql('mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }',
    { v: { Loop: [{ n: input.args.coreResult[0].n + 1 }] } });
  cb(!res.errors, null);
};`,
	"place": `exports.main = (input, cb) => cb('placed ' + input.args.item, null);`,
}

// TestTriggers: a record type's before trigger refuses an upsert (false,
// or a failure: TRIGGER_REFUSED naming it, nothing stored) or lets it
// through (true); its after trigger sees the committed record and
// writes an audit record of it; a Mutation field's before trigger
// refuses or lets a call through. Runs on both stores.
func TestTriggers(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	env.PutRelease("trig", "v1", triggerSDL)
	env.PublishFunctions("trig", triggerFunctions)
	token := env.CreateInstance("trig.test", "trig", "v1", tenant.Settings{})
	inst := instanceID(t, env, "trig.test")
	count := func(typ string) int {
		t.Helper()
		recs, err := env.Store.Find(context.Background(), inst, &store.Query{Type: typ, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}

	for _, item := range []string{"forbidden fruit", "boom"} {
		st, body := env.GraphQL("trig.test", token, hookUpsert, map[string]any{"v": map[string]any{"Order": map[string]any{"item": item}}})
		msg, code := servertest.FirstError(body)
		if code != "TRIGGER_REFUSED" || !strings.Contains(msg, "Query.allow") {
			t.Errorf("upsert of %q: %d %s, want TRIGGER_REFUSED naming Query.allow", item, st, jsonText(body))
		}
		if item == "boom" && !strings.Contains(msg, "the trigger blew up") {
			t.Errorf("a failing trigger's refusal does not say why: %q", msg)
		}
	}
	if n := count("Order"); n != 0 {
		t.Fatalf("%d Orders stored after refused upserts", n)
	}

	id := upsertOK(t, env, "trig.test", token, map[string]any{"Order": map[string]any{"item": "apples"}})
	poll.Until(t, "the after trigger's audit record", func() bool { return count("Audit") > 0 })
	recs, err := env.Store.Find(context.Background(), inst, &store.Query{Type: "Audit", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Fields["order"] != id || recs[0].Fields["item"] != "apples" || recs[0].Fields["committed"] != true {
		t.Errorf("audit records: %d, first %v; want one of order %s, apples, committed", len(recs), recs[0].Fields, id)
	}

	// Triggers run as the caller: an account's write is audited by that
	// account's after trigger, under its rights.
	accountID := upsertOK(t, env, "trig.test", token, map[string]any{"Account": map[string]any{"username": "ada", "password": map[string]any{"value": "correct horse battery"}}})
	_, body := env.GraphQL("trig.test", "", `{ login(username: "ada", password: "correct horse battery") { sessionToken } }`, nil)
	session, _ := body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)
	id = upsertOK(t, env, "trig.test", session, map[string]any{"Order": map[string]any{"item": "ada's plums"}})
	poll.Until(t, "the audit of the account's order", func() bool { return count("Audit") == 2 })
	recs, err = env.Store.Find(context.Background(), inst, &store.Query{Type: "Audit", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Fields["order"] == id && (r.CreatedBy != accountID || r.Fields["committed"] != true) {
			t.Errorf("the account's audit: created by %s (want %s), %v", r.CreatedBy, accountID, r.Fields)
		}
	}

	// A trigger's own writes fire triggers three levels deep, no deeper:
	// the client's Loop and three more.
	upsertOK(t, env, "trig.test", token, map[string]any{"Loop": map[string]any{"n": 0}})
	poll.Until(t, "three levels of Loop triggers", func() bool { return count("Loop") >= 4 })
	upsertOK(t, env, "trig.test", token, map[string]any{"Order": map[string]any{"item": "a marker"}})
	poll.Until(t, "the marker's audit", func() bool { return count("Audit") == 3 }) // a trigger run after the fourth Loop: a fifth would be under way
	if n := count("Loop"); n != 4 {
		t.Errorf("%d Loop records, want 4 (depth 3)", n)
	}

	st, body := env.GraphQL("trig.test", token, `mutation { place(item: "forbidden thing") }`, nil)
	if _, code := servertest.FirstError(body); code != "TRIGGER_REFUSED" {
		t.Errorf("a refused call: %d %s", st, jsonText(body))
	}
	st, body = env.GraphQL("trig.test", token, `mutation { place(item: "pears") }`, nil)
	if msg, _ := servertest.FirstError(body); st != http.StatusOK || msg != "" || body["data"].(map[string]any)["place"] != "placed pears" {
		t.Errorf("an allowed call: %d %s", st, jsonText(body))
	}
}
