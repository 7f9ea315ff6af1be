package arcql

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestParseIDEquals checks which texts the read by id's reading takes
// (those the REST route writes for an id that needs no escape) and that
// each query it returns is the parser's, positions included.
func TestParseIDEquals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		text string
		lim  Limits
		ok   bool
	}{
		{"ulid", "core.id = " + Quote("01HZXQ4R6Z6Y1ZK3W8V5T2N9M7"), DefaultLimits(), true},
		{"as the route writes it", "core.id = " + Quote("b00500"), DefaultLimits(), true},
		{"empty id", "core.id = ''", DefaultLimits(), true},
		{"spaces and punctuation", "core.id = " + Quote(`a b "c" ) OR * (`), DefaultLimits(), true},
		{"non-ASCII", "core.id = " + Quote("ünï ✓ 𝄞"), DefaultLimits(), true},
		{"longest string", "core.id = " + Quote(strings.Repeat("x", 48)), fuzzLimits, true},
		{"string too long", "core.id = " + Quote(strings.Repeat("x", 49)), fuzzLimits, false},
		{"escaped quote", "core.id = " + Quote("O'Reilly"), DefaultLimits(), false},
		{"escaped backslash", "core.id = " + Quote(`a\b`), DefaultLimits(), false},
		{"escaped control", "core.id = " + Quote("a\nb"), DefaultLimits(), false},
		{"raw control", "core.id = 'a\nb'", DefaultLimits(), false},
		{"raw DEL", "core.id = 'a\x7fb'", DefaultLimits(), false},
		{"quote inside", "core.id = 'a' OR x = 'b'", DefaultLimits(), false},
		{"unterminated", "core.id = 'a", DefaultLimits(), false},
		{"double quotes", `core.id = "a"`, DefaultLimits(), false},
		{"other spacing", "core.id='a'", DefaultLimits(), false},
		{"leading space", " core.id = 'a'", DefaultLimits(), false},
		{"other operator", "core.id != 'a'", DefaultLimits(), false},
		{"other field", "core.ids = 'a'", DefaultLimits(), false},
		{"sorted", "core.id = 'a' SORT title", DefaultLimits(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkParseIDEquals(t, tc.text, tc.lim.withDefaults(), tc.ok)
		})
	}
}

// FuzzParseIDEquals: whatever text the read by id's reading takes, the
// parser reads as the same query, positions included.
func FuzzParseIDEquals(f *testing.F) {
	for _, s := range []string{"core.id = 'b00500'", "core.id = ''", "core.id = 'a\\'b'", "core.id = 'a' AND b = 'c'", "core.id = 'ü'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lim := fuzzLimits.withDefaults()
		if len(text) > lim.MaxBytes || !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
			return // Parse refuses it before either reading
		}
		_, ok := parseIDEquals(text, lim)
		checkParseIDEquals(t, text, lim, ok)
	})
}

// checkParseIDEquals checks that parseIDEquals takes text exactly when ok,
// and then returns what the parser reads from it.
func checkParseIDEquals(t *testing.T, text string, lim Limits, ok bool) {
	t.Helper()
	got, gotOK := parseIDEquals(text, lim)
	if gotOK != ok {
		t.Fatalf("parseIDEquals(%q) took it: %v, want %v", text, gotOK, ok)
	}
	if !ok {
		return
	}
	want, err := parse(text, lim)
	if err != nil {
		t.Fatalf("parseIDEquals(%q) took a text the parser refuses: %v", text, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("parseIDEquals(%q) differs from the parser (-parser +parseIDEquals):\n%s", text, diff)
	}
}
