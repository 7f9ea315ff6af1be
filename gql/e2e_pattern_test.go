package gql_test

import (
	"strings"
	"testing"
)

// TestPatternsAgainstLongValues: ArcQL's wildcard patterns that make a
// backtracking matcher exponential, and regular expression syntax (which
// ArcQL takes as literal text), against a 10 KB stored value, answer on
// the store the server runs on (bolt, then MongoDB: the end-to-end suite
// runs on both), with the records they match and nothing else.
//
// hostile checklist 25: a pattern filter (a+)+$ against a 10 KB value →
// escaped or bounded.
func TestPatternsAgainstLongValues(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.books(strings.Repeat("a", 10<<10), "short")
	const doc = `query($q: String!) { find(type: Book, arcql: $q, first: 10) { edges { cursor } } }`
	for _, tc := range []struct {
		filter string
		want   int
	}{
		{`title * '*a*a*a*a*a*a*a*a*a*b'`, 0},
		{`title * 'a*a*a*a*a*a*a*a*a*a'`, 1},
		{`title * '(a+)+$'`, 0},
		{`title ^ '(a+)+'`, 0},
		{`title ~ '(a+)+$'`, 0},
		{`title * '` + strings.Repeat("a?", 500) + `*'`, 1},
	} {
		d := c.data(doc, map[string]any{"q": tc.filter})
		if got := len(path(d, "find", "edges").([]any)); got != tc.want {
			t.Errorf("%.60s: %d records, want %d", tc.filter, got, tc.want)
		}
	}
}
