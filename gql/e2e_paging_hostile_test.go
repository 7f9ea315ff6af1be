package gql_test

import (
	"strings"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestHostilePagingArguments: page sizes below 1 or above the maximum,
// values that are not integers, and cursors that are garbage or another
// instance's record ids are refused with 400 naming the argument (docs/
// api.md: above the maximum is an error, not a clamp), on find, as
// literals and as variables; nothing of either instance is answered.
//
// hostile checklist 32: first: -1, first: 1000000, a non-integer, a
// base64-garbage or other-tenant cursor → 400, never a full scan.
func TestHostilePagingArguments(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.books("mine-1", "mine-2")
	other := &client{t: t, env: c.env, domain: "other.test", token: c.env.CreateInstance("other.test", "bookstore", "v1", tenant.Settings{})}
	otherIDs := other.books("theirs-1", "theirs-2")

	const literal = `{ find(type: Book, arcql: "*", %s) { edges { cursor node { ... on Book { title } } } } }`
	const withVars = `query($n: Int, $a: String) { find(type: Book, arcql: "*", first: $n, after: $a) { edges { cursor node { ... on Book { title } } } } }`
	cases := []struct {
		name   string
		doc    string
		vars   map[string]any
		status int
		naming string // the message names this
	}{
		{"first: -1", strings.Replace(literal, "%s", "first: -1", 1), nil, 200, "between 1 and 1000"},
		{"first: 0", strings.Replace(literal, "%s", "first: 0", 1), nil, 200, "between 1 and 1000"},
		{"first: 1000000", strings.Replace(literal, "%s", "first: 1000000", 1), nil, 200, "between 1 and 1000"},
		{"first over Int", strings.Replace(literal, "%s", "first: 99999999999", 1), nil, 200, "between 1 and 1000"},
		{"first: 1.5", strings.Replace(literal, "%s", "first: 1.5", 1), nil, 400, "first"},
		{`first: "ten"`, strings.Replace(literal, "%s", `first: "ten"`, 1), nil, 400, "first"},
		{"$n = -1", withVars, map[string]any{"n": -1}, 200, "between 1 and 1000"},
		{"$n = 1000000", withVars, map[string]any{"n": 1_000_000}, 200, "between 1 and 1000"},
		{"$n = 1e300", withVars, map[string]any{"n": 1e300}, 400, "$n"},
		{"$n = 2.5", withVars, map[string]any{"n": 2.5}, 400, "$n"},
		{`$n = "5"`, withVars, map[string]any{"n": "5"}, 400, "$n"},
		{"$n = true", withVars, map[string]any{"n": true}, 400, "$n"},
		{"base64 garbage cursor", withVars, map[string]any{"n": 5, "a": "////AAAA+/8=="}, 200, "cursor"},
		{"binary cursor", withVars, map[string]any{"n": 5, "a": "\x00\xff\x01"}, 200, "cursor"},
		{"another instance's cursor", withVars, map[string]any{"n": 5, "a": otherIDs[0]}, 200, "cursor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := c.do(tc.doc, tc.vars)
			text := dump(body)
			msg, code := firstError(body)
			if status != tc.status || (code != "BAD_REQUEST" && code != "") || !strings.Contains(msg, tc.naming) {
				t.Errorf("%d %s, want %d with an error naming %q", status, text, tc.status, tc.naming)
			}
			if status == 200 && code != "BAD_REQUEST" {
				t.Errorf("code %q, want BAD_REQUEST", code)
			}
			if path(body, "data", "find", "edges") != nil {
				t.Errorf("records were answered: %s", text)
			}
			for _, leak := range []string{"theirs-", "mine-"} {
				if strings.Contains(text, leak) {
					t.Errorf("the answer holds %q: %s", leak, text)
				}
			}
		})
	}
	// The largest page is served, and holds this instance's records only.
	d := c.data(strings.Replace(literal, "%s", "first: 1000", 1), nil)
	if got := len(path(d, "find", "edges").([]any)); got != 2 {
		t.Errorf("first: 1000 answered %d records, want this instance's 2", got)
	}
}
