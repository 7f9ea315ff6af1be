package admin_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestBreakingChange: a release swap that stored records would not
// survive is refused with 409 BREAKING_CHANGE naming each field; a
// widening, a change no record is affected by, and a forced swap go
// through.
func TestBreakingChange(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	const v1 = `enum Color { RED BLUE }
type Person { name: String age: Int color: Color nick: Int note: Int }`
	env.PutRelease("people", "v1", v1)
	for name, sdl := range map[string]string{
		"retyped":  strings.Replace(v1, "age: Int", "age: String", 1),
		"listed":   strings.Replace(v1, "age: Int", "age: [Int]", 1),
		"required": strings.Replace(v1, "name: String", "name: String!", 1),
		"added":    strings.Replace(v1, "nick: Int", "nick: Int mail: String!", 1),
		"enum":     strings.Replace(v1, "RED BLUE", "BLUE GREEN", 1),
		"several":  strings.Replace(strings.Replace(v1, "age: Int", "age: Boolean", 1), "RED BLUE", "BLUE", 1),
		"widened":  strings.Replace(strings.Replace(v1, "age: Int", "age: Float", 1), "color: Color", "color: String", 1),
		"unused":   strings.Replace(strings.Replace(v1, "nick: Int", "nick: Int!", 1), "note: Int", "note: [String]", 1),
	} {
		env.PutRelease("people", name, sdl)
	}
	token := env.CreateInstance("p.test", "people", "v1", tenant.Settings{})
	for _, doc := range []string{
		`mutation { upsert(values: {Person: {name: "Ada", age: 36, color: RED, nick: 1}}) { id } }`,
		`mutation { upsert(values: {Person: {age: 3, nick: 2}}) { id } }`,
	} {
		if status, body := env.GraphQL("p.test", token, doc, nil); status != 200 || body["errors"] != nil {
			t.Fatalf("%s: %d %s", doc, status, dump(body))
		}
	}
	// "unused" makes nick required, which every record has, and retypes
	// note, which no record has: nothing breaks.
	refused := func(release string, want ...string) step {
		return step{name: "swap to " + release, method: "PATCH", path: "/instances/p.test", body: map[string]any{"release": release},
			status: 409, code: "BREAKING_CHANGE", message: "^release " + release + " would break records instance p.test holds: " + strings.Join(want, "; ") + ` \(set "force": true`,
			check: func(t *testing.T, body map[string]any) {
				ext := body["errors"].([]any)[0].(map[string]any)["extensions"].(map[string]any)
				if changes, _ := ext["changes"].([]any); len(changes) != len(want) {
					t.Errorf("swap to %s: extensions.changes = %s, want %d entries", release, dump(ext["changes"]), len(want))
				}
			}}
	}
	serving := func(release string) step {
		return step{name: "still serving " + release, method: "GET", path: "/instances/p.test", status: 200,
			check: wantFields(map[string]any{"release": release})}
	}
	run(t, env, []step{
		refused("retyped", `Person\.age type Int → String, and records hold values`),
		refused("listed", `Person\.age type Int → \[Int\], and records hold values`),
		refused("required", `Person\.name becomes required, and records lack it`),
		refused("added", `Person\.mail is added as required, and records lack it`),
		refused("enum", `Person\.color enum Color loses RED, and records hold values`),
		refused("several", `Person\.age type Int → Boolean, and records hold values`, `Person\.color enum Color loses RED, and records hold values`),
		serving("v1"),
		{name: "force is a boolean", method: "PATCH", path: "/instances/p.test", body: map[string]any{"release": "retyped", "force": "yes"},
			status: 400, code: "BAD_REQUEST", message: "^force: expected true or false$"},
		{name: "a change no record is affected by", method: "PATCH", path: "/instances/p.test", body: map[string]any{"release": "unused"},
			status: 200, check: wantFields(map[string]any{"release": "unused"})},
		{name: "back", method: "PATCH", path: "/instances/p.test", body: map[string]any{"release": "v1"}, status: 200},
		{name: "a widening", method: "PATCH", path: "/instances/p.test", body: map[string]any{"release": "widened"},
			status: 200, check: wantFields(map[string]any{"release": "widened"})},
	})

	// The widened field filters and sorts its stored values as numbers.
	status, body := env.GraphQL("p.test", token, `{ find(type: Person, arcql: "age > 2.5 SORT age DESC") { edges { node { ... on Person { age color } } } } }`, nil)
	var got []any
	if status == 200 && body["errors"] == nil {
		for _, e := range body["data"].(map[string]any)["find"].(map[string]any)["edges"].([]any) {
			n := e.(map[string]any)["node"].(map[string]any)
			got = append(got, n["age"], n["color"])
		}
	}
	if want := []any{float64(36), "RED", float64(3), nil}; !cmp.Equal(got, want) {
		t.Errorf("after widening: %d %s, want ages and colors %v", status, dump(body), want)
	}

	// Narrowing back is itself refused; forced, it goes through and the
	// records keep their values.
	run(t, env, []step{
		refused("retyped", `Person\.age type Float → String, and records hold values`, `Person\.color type String → Color, and records hold values`),
		{name: "forced", method: "PATCH", path: "/instances/p.test", body: map[string]any{"release": "retyped", "force": true},
			status: 200, check: wantFields(map[string]any{"release": "retyped"})},
	})
	// Forced, the records keep their stored values: GraphQL reads the
	// numbers as String, and a filter compares the stored numbers.
	ages := func(filter string) []any {
		t.Helper()
		status, body := env.GraphQL("p.test", token, `query($q: String!) { find(type: Person, arcql: $q) { edges { node { ... on Person { age } } } } }`, map[string]any{"q": filter})
		if status != 200 || body["errors"] != nil {
			t.Fatalf("%s: %d %s", filter, status, dump(body))
		}
		out := []any{}
		for _, e := range body["data"].(map[string]any)["find"].(map[string]any)["edges"].([]any) {
			out = append(out, e.(map[string]any)["node"].(map[string]any)["age"])
		}
		return out
	}
	if got := ages("* SORT age DESC"); !cmp.Equal(got, []any{"36", "3"}) {
		t.Errorf("ages after the forced swap: %v, want [36 3] as strings", got)
	}
	if got := ages(`age = "36"`); len(got) != 0 {
		t.Errorf(`age = "36" after the forced swap matched %v; the stored value is a number`, got)
	}
}
