package gql

import (
	"strings"
	"testing"

	"github.com/corehq/core/errcode"
)

func TestGuard(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name, doc string
		refused   string // a part of the message; "" passes
	}{
		{"ordinary", `query($id: String!) { get(type: Book, id: $id) { ... on Book { title a: price } } }`, ""},
		{"nesting at the limit", strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting), ""},
		{"nesting over", strings.Repeat("{a", maxNesting+1), "deeper than 64"},
		{"mixed brackets over", strings.Repeat("{a(b:[", 30), "deeper than 64"},
		{"brackets in strings do not count", `{ f(s: "` + strings.Repeat("{", 200) + `") }`, ""},
		{"brackets in block strings do not count", `{ f(s: """` + strings.Repeat("[", 200) + `\""" still in""") }`, ""},
		{"brackets in comments do not count", "# " + strings.Repeat("(", 200) + "\n{ a }", ""},
		{"an escaped quote stays in the string", `{ f(s: "\"` + strings.Repeat("{", 100) + `") }`, ""},
		{"tokens over", "{" + strings.Repeat(" a", cfg.MaxTokens) + " }", "more than 10000 tokens"},
		{"directives count as tokens", "{ a" + strings.Repeat(" @skip", cfg.MaxTokens) + " }", "more than 10000 tokens"},
		{"aliases at the limit", "{" + strings.Repeat(" x: a", cfg.MaxAliases) + " }", ""},
		{"aliases over", "{" + strings.Repeat(" x: a", cfg.MaxAliases+1) + " }", "more than 30 aliases"},
		{"arguments are not aliases", "{ a(" + strings.Repeat(" x: 1", 100) + ") }", ""},
		{"numbers are one token each", "{ f(x: [" + strings.Repeat("12345.5e10 -7 ", 4000) + "]) }", ""},
		{"unterminated string", `{ f(s: "` + strings.Repeat("{", 100), ""},
	} {
		err := guard(tc.doc, cfg)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused) || errcode.As(err).Code != errcode.TooComplex):
			t.Errorf("%s: %v, want TOO_COMPLEX naming %q", tc.name, err, tc.refused)
		}
	}
}

// FuzzGuard: the guard never panics, and whatever it lets through has
// bounded nesting and tokens, as counted again here by a simpler scan
// that ignores strings and comments (an upper bound of what the guard
// counts).
func FuzzGuard(f *testing.F) {
	for _, s := range []string{`{ a }`, `query($v: [Int]) { f(x: $v) { b: c } }`, `{ f(s: """a"""") }`, `# c` + "\n{a}", `"\"{{{"`, `{a{a{a`} {
		f.Add(s)
	}
	cfg := DefaultConfig()
	f.Fuzz(func(t *testing.T, doc string) {
		if guard(doc, cfg) != nil {
			return
		}
		if !strings.ContainsAny(doc, `"#`) {
			depth, most := 0, 0
			for _, c := range []byte(doc) {
				switch c {
				case '{', '[', '(':
					depth++
					most = max(most, depth)
				case '}', ']', ')':
					depth = max(depth-1, 0)
				}
			}
			if most > maxNesting {
				t.Fatalf("passed with nesting %d", most)
			}
		}
		if len(doc) > 4*cfg.MaxTokens && strings.Count(doc, " ")+strings.Count(doc, "\n") == 0 && !strings.ContainsAny(doc, `"#`) &&
			strings.Trim(doc, "{}[]():@$!=|&.") == "" {
			t.Fatalf("passed %d punctuation tokens", len(doc))
		}
	})
}

// BenchmarkGuard measures the guard on an ordinary document (the bench's
// find, about 0.3 KB); ns/op per KB is its cost per KB.
func BenchmarkGuard(b *testing.B) {
	doc := `query($q: String!) { find(type: Book, arcql: $q, first: 25) { edges { cursor node { ... on Book { title authorid price core { id created updated trashed createdBy impl app release instance publisherRealm publisherApp publisherRelease instanceId } } } }
	pageInfo { hasPreviousPage hasNextPage startCursor endCursor pageLimit previousOffsets nextOffsets } } }`
	cfg := DefaultConfig()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for range b.N {
		if err := guard(doc, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
