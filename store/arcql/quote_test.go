package arcql

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestQuote checks that a quoted value parses back to itself, whatever
// syntax it holds, and pins the escapes.
func TestQuote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", `''`},
		{"01HZX", `'01HZX'`},
		{"O'Reilly", `'O\'Reilly'`},
		{`back\slash`, `'back\\slash'`},
		{`say "hi"`, `'say "hi"'`},
		{"line\nbreak\ttab", `'line\nbreak\ttab'`},
		{"bell\x07del\x7f", `'bell\u0007del\u007f'`},
		{"ünï ✓ 𝄞", `'ünï ✓ 𝄞'`},
		{`') OR * OR ('`, `'\') OR * OR (\''`},
		{`") { __schema { types { name } } }`, `'") { __schema { types { name } } }'`},
		{`{"$gt":""}`, `'{"$gt":""}'`},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
		checkQuoteRoundTrip(t, tc.in)
	}
}

// FuzzQuote: any valid UTF-8 value, quoted, is one string literal that
// parses back to the value.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a", "'", `\`, "\n", "\x00", `') OR ('a' = 'a`, `{"$gt":""}`, "\U0001F600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > DefaultLimits().MaxStringBytes {
			return
		}
		if strings.ContainsRune(s, 0) {
			// A NUL is refused, quoted or not (nul_test.go).
			if _, err := Parse("core.id = "+Quote(s), Limits{MaxBytes: 8*len(s) + 64}); err == nil {
				t.Fatalf("a quoted value holding a NUL parsed: %q", s)
			}
			return
		}
		checkQuoteRoundTrip(t, s)
	})
}

func checkQuoteRoundTrip(t *testing.T, s string) {
	t.Helper()
	text := "core.id = " + Quote(s)
	q, err := Parse(text, Limits{MaxBytes: 8 * len(text)})
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	c, ok := q.Filter.(*Compare)
	if !ok || c.Op != OpEq || strings.Join(c.Path.Parts, ".") != "core.id" || c.Value.Kind != KindString || c.Value.Str != s {
		t.Fatalf("Parse(%q) = %s, want core.id = the value %q", text, q, s)
	}
}
