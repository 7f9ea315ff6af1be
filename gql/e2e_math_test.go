package gql_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/tenant"
)

const countersSDL = `
type Counter { value: Int total: Float label: String code: Int @unique tags: [String!] }
`

// newCounters starts a server with the counters schema on counters.test
// and the accounts alice and bob.
func newCounters(t *testing.T) (admin, alice, bob *client, bobID string) {
	t.Helper()
	admin = newBookstore(t)
	admin.env.PutRelease("counters", "v1", countersSDL)
	admin.token = admin.env.CreateInstance("counters.test", "counters", "v1", tenant.Settings{})
	admin.domain = "counters.test"
	admin.newAccount("alice", "", "correct horse battery")
	bobID = admin.newAccount("bob", "", "correct horse battery")
	return admin, admin.login("alice", "correct horse battery"), admin.login("bob", "correct horse battery"), bobID
}

const (
	mathDoc    = `mutation($v: CoreMathInputUnion!) { math(values: $v) { id } }`
	counterDoc = `query($id: String!) { get(type: Counter, id: $id) { ... on Counter { value total tags } } }`
)

func counterMath(id string, field string, ops map[string]any) map[string]any {
	in := map[string]any{"core": map[string]any{"id": id}}
	for k, v := range ops {
		in[k] = v
	}
	return map[string]any{"v": map[string]any{"Counter": []any{map[string]any{field: in}}}}
}

func TestMathIsAtomic(t *testing.T) {
	t.Parallel()
	admin, alice, _, _ := newCounters(t)
	id := path(alice.data(grantDoc, map[string]any{"v": map[string]any{"Counter": map[string]any{"value": 0, "total": 0}}}), "upsert", 0, "id").(string)
	const callers = 100
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := map[string]any{"v": map[string]any{"Counter": []any{map[string]any{
				"value": map[string]any{"core": map[string]any{"id": id}, "plus": 1},
				"total": map[string]any{"core": map[string]any{"id": id}, "plus": 0.5},
			}}}}
			status, body := alice.do(mathDoc, v)
			if status != 200 || body["errors"] != nil || path(body, "data", "math", 0, "id") != id {
				t.Errorf("math: %d %s", status, dump(body))
			}
		}()
	}
	wg.Wait()
	got := admin.data(counterDoc, map[string]any{"id": id})
	if path(got, "get", "value") != float64(callers) || path(got, "get", "total") != float64(callers)/2 {
		t.Errorf("after %d concurrent increments: %s, want value %d and total %v", callers, dump(got), callers, float64(callers)/2)
	}
}

func TestMath(t *testing.T) {
	t.Parallel()
	admin, alice, bob, bobID := newCounters(t)
	id := path(alice.data(grantDoc, map[string]any{"v": map[string]any{"Counter": map[string]any{"value": 10, "total": 5.99, "label": "x", "code": 1}}}), "upsert", 0, "id").(string)
	value := func() any {
		t.Helper()
		return path(admin.data(counterDoc, map[string]any{"id": id}), "get", "value")
	}
	// Hypi's order: div, times, minus, plus; an Int field in whole numbers.
	alice.data(mathDoc, counterMath(id, "value", map[string]any{"div": 2, "times": 3, "minus": 1, "plus": 4}))
	if got := value(); got != float64(18) {
		t.Fatalf("(10 / 2) * 3 - 1 + 4 = %v, want 18", got)
	}
	d := alice.data(`mutation($id: String) { math(values: {Counter: [{total: {core: {id: $id}, div: 3, times: 10, minus: 2, plus: 30}}]}) { id updated } }`, map[string]any{"id": id})
	if path(d, "math", 0, "id") != id || path(d, "math", 0, "updated") == nil {
		t.Errorf("math's answer: %s", dump(d))
	}
	if got := path(admin.data(counterDoc, map[string]any{"id": id}), "get", "total").(float64); got < 47.966 || got > 47.967 {
		t.Errorf("5.99 / 3 * 10 - 2 + 30 = %v, want 47.9666…", got)
	}

	// Bad input: a clear error, nothing changed.
	for _, c := range []struct {
		name, code, msg string
		v               map[string]any
	}{
		{"division by zero", "BAD_REQUEST", "division by zero", counterMath(id, "value", map[string]any{"div": 0, "plus": 1})},
		{"a fraction on an Int", "BAD_REQUEST", "an Int", counterMath(id, "value", map[string]any{"plus": 1.5})},
		{"no operation", "BAD_REQUEST", "no operation", counterMath(id, "value", nil)},
		{"beyond an Int", "BAD_REQUEST", "Counter.value", counterMath(id, "value", map[string]any{"times": 2147483647})},
		{"a record that does not exist", "NOT_FOUND", "Counter nope does not exist", counterMath("nope", "value", map[string]any{"plus": 1})},
		{"no id", "BAD_REQUEST", "core.id", map[string]any{"v": map[string]any{"Counter": []any{map[string]any{"value": map[string]any{"core": map[string]any{}, "plus": 1}}}}}},
		{"a non-numeric field", "BAD_REQUEST", "label", counterMath(id, "label", map[string]any{"plus": 1})},
		{"a @unique field", "BAD_REQUEST", "code", counterMath(id, "code", map[string]any{"plus": 1})},
		{"an unknown type", "BAD_REQUEST", "Nope", map[string]any{"v": map[string]any{"Nope": []any{}}}},
	} {
		_, msg, code := alice.fail(mathDoc, c.v)
		if code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %s %q, want %s naming %q", c.name, code, msg, c.code, c.msg)
		}
	}
	// A batch with one bad entry writes nothing of the others.
	batch := map[string]any{"v": map[string]any{"Counter": []any{
		map[string]any{"value": map[string]any{"core": map[string]any{"id": id}, "plus": 100}},
		map[string]any{"value": map[string]any{"core": map[string]any{"id": id}, "times": 2147483647}},
	}}}
	if _, _, code := alice.fail(mathDoc, batch); code != "BAD_REQUEST" {
		t.Errorf("a batch overflowing in its second entry: %s, want BAD_REQUEST", code)
	}
	if got := value(); got != float64(18) {
		t.Errorf("refused math changed the value: %v, want 18", got)
	}

	// The caller's write rights: bob cannot read alice's counter (as if
	// it did not exist); with a read grant he still may not change it.
	if _, _, code := bob.fail(mathDoc, counterMath(id, "value", map[string]any{"plus": 1})); code != "NOT_FOUND" {
		t.Errorf("bob's math on alice's counter: %s, want NOT_FOUND", code)
	}
	alice.grant(map[string]any{"resource": id, "resourceType": "Counter", "operationType": "Query", "operation": "get", "permissionType": "RBP", "members": members(bobID)})
	if _, _, code := bob.fail(mathDoc, counterMath(id, "value", map[string]any{"plus": 1})); code != "FORBIDDEN" {
		t.Errorf("bob's math on alice's counter he may read: %s, want FORBIDDEN", code)
	}
	alice.grant(map[string]any{"resource": id, "resourceType": "Counter", "operationType": "Mutation", "operation": "upsert", "permissionType": "RBP", "members": members(bobID), "fields": "total"})
	if _, msg, code := bob.fail(mathDoc, counterMath(id, "value", map[string]any{"plus": 1})); code != "FORBIDDEN" || !strings.Contains(msg, "value") {
		t.Errorf("bob's math on a field his grant does not cover: %s %q", code, msg)
	}
	if got := value(); got != float64(18) {
		t.Errorf("bob's refused math changed the value: %v, want 18", got)
	}
	bob.data(mathDoc, counterMath(id, "total", map[string]any{"times": 0}))
	if got := path(admin.data(counterDoc, map[string]any{"id": id}), "get", "total"); got != float64(0) {
		t.Errorf("bob's math on the field his grant covers: total %v, want 0", got)
	}
}

func TestDeleteScalars(t *testing.T) {
	t.Parallel()
	admin, alice, bob, bobID := newCounters(t)
	mk := func(c *client, tags ...any) string {
		t.Helper()
		return path(c.data(grantDoc, map[string]any{"v": map[string]any{"Counter": map[string]any{"tags": tags}}}), "upsert", 0, "id").(string)
	}
	a1, a2, a3 := mk(alice, "a", "b", "a", "c"), mk(alice, "a"), mk(alice, "z")
	b1 := mk(bob, "a", "b")
	tags := func(id string) []any {
		t.Helper()
		l, _ := path(admin.data(counterDoc, map[string]any{"id": id}), "get", "tags").([]any)
		return l
	}
	del := `mutation($f: String!, $v: [Any!]!, $q: String!) { deleteScalars(type: Counter, field: $f, values: $v, arcql: $q) }`

	// Bad input: a clear error, nothing changed.
	for _, c := range []struct {
		name string
		vars map[string]any
		msg  string
	}{
		{"an unknown field", map[string]any{"f": "nope", "v": []any{"a"}, "q": "*"}, "Counter has no field nope"},
		{"not a list", map[string]any{"f": "label", "v": []any{"a"}, "q": "*"}, "not a list"},
		{"a value of another type", map[string]any{"f": "tags", "v": []any{1}, "q": "*"}, "not a String"},
		{"a bad filter", map[string]any{"f": "tags", "v": []any{"a"}, "q": "nope = ("}, ""},
	} {
		if _, msg, code := alice.fail(del, c.vars); (code != "BAD_REQUEST" && code != "BAD_FILTER") || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %s %q", c.name, code, msg)
		}
	}
	if diff := cmp.Diff([]any{"a", "b", "a", "c"}, tags(a1)); diff != "" {
		t.Fatalf("refused deleteScalars changed a1 (-want +got):\n%s", diff)
	}

	// Only the records the caller may change: bob reads alice's with a
	// grant but changes only his own.
	alice.grant(map[string]any{"resource": "*", "resourceType": "Counter", "operationType": "Query", "operation": "find", "permissionType": "RBP", "members": members(bobID)})
	if got := path(bob.data(del, map[string]any{"f": "tags", "v": []any{"a"}, "q": "*"}), "deleteScalars"); got != float64(1) {
		t.Errorf("bob's deleteScalars: %v records changed, want 1 (his own)", got)
	}
	if diff := cmp.Diff([]any{"b"}, tags(b1)); diff != "" {
		t.Errorf("bob's counter (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"a"}, tags(a2)); diff != "" {
		t.Errorf("alice's counter after bob's deleteScalars (-want +got):\n%s", diff)
	}
	// alice: every occurrence, on the records holding one; a3 holds none.
	if got := path(alice.data(del, map[string]any{"f": "tags", "v": []any{"a", "c"}, "q": "*"}), "deleteScalars"); got != float64(2) {
		t.Errorf("alice's deleteScalars: %v records changed, want 2", got)
	}
	for id, want := range map[string][]any{a1: {"b"}, a2: {}, a3: {"z"}, b1: {"b"}} {
		if diff := cmp.Diff(want, tags(id)); diff != "" {
			t.Errorf("%s after alice's deleteScalars (-want +got):\n%s", id, diff)
		}
	}
	// The filter narrows.
	mk(alice, "q")
	a5 := mk(alice, "q", "r")
	if got := path(alice.data(del, map[string]any{"f": "tags", "v": []any{"q"}, "q": "core.id = '" + a5 + "'"}), "deleteScalars"); got != float64(1) {
		t.Errorf("deleteScalars of one record: %v", got)
	}
}
