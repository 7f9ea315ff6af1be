package schema

import (
	"strings"
	"testing"
)

func TestTriggers(t *testing.T) {
	t.Parallel()
	const roots = `
type Query { allow(values: Json): Boolean @fn(name: "allow", version: "v1")  count: Int @fn(name: "count", version: "v1")  plain: Boolean }
type Mutation { audit(values: Json, coreResult: Json): Boolean @fn(name: "audit", version: "v1")
  place(item: String): String @fn(name: "place", version: "v1") @trigger(config: {before: {type: Query, field: "allow"}}) }
`
	m, err := Parse(`type Order @trigger(config: {before: {type: Query, field: "allow"}, after: {type: Mutation, field: "audit"}}) { item: String }`+roots, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	order, _ := m.Type("Order")
	if tr := order.Trigger; tr == nil || *tr.Before != (TriggerRef{"Query", "allow"}) || *tr.After != (TriggerRef{"Mutation", "audit"}) {
		t.Errorf("Order's trigger: %+v", order.Trigger)
	}
	if f := m.RootField("Mutation", "place"); f.Trigger == nil || f.Trigger.After != nil || *f.Trigger.Before != (TriggerRef{"Query", "allow"}) {
		t.Errorf("place's trigger: %+v", f.Trigger)
	}
	for _, tc := range []struct{ sdl, want string }{
		{`type O @trigger(config: {before: {type: Query, field: "nope"}}) { a: Int }`, `type O: @trigger before: Query.nope is not a field of the schema`},
		{`type O @trigger(config: {before: {type: Query, field: "plain"}}) { a: Int }`, `Query.plain is not bound to a function (@fn)`},
		{`type O @trigger(config: {before: {type: Query, field: "count"}}) { a: Int }`, `@trigger before: Query.count must answer Boolean`},
		{`type O @trigger(config: {after: {type: Mutation, field: "place"}}) { a: Int }`, `Mutation.place has a trigger of its own`},
		{`type O @trigger(config: {}) { a: Int }`, `@trigger names neither before nor after`},
		{`type O { a: Int @trigger(config: {after: {type: Mutation, field: "audit"}}) }`, `@trigger is allowed only on record types and Mutation fields`},
		{`type O @trigger(config: {before: {type: Nope, field: "allow"}}) { a: Int }`, `@trigger argument config`},
	} {
		_, err := Parse(tc.sdl+roots, DefaultLimits())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.sdl, err, tc.want)
		}
	}
	_, err = Parse(`type Query { allow: Boolean @fn(name: "allow", version: "v1") @trigger(config: {before: {type: Query, field: "allow"}}) }`, DefaultLimits())
	if err == nil || !strings.Contains(err.Error(), "allowed only on record types and Mutation fields") {
		t.Errorf("a Query field's trigger: %v", err)
	}
}
