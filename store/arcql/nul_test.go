package arcql

import (
	"errors"
	"testing"
)

// TestNULAndOperatorsRefused: a NUL, raw anywhere in the text or written
// as the \u0000 escape, and MongoDB's server-side code operators written
// as ArcQL ($where, $function, $expr, $accumulator) are parse errors
// naming the problem and its position.
//
// hostile checklist 24: $where, $function, $expr, \u0000 and a raw NUL
// in a filter → 400 from our parser. ($name is a parameter of access
// rules, which a filter refuses when it is bound, and never a field.)
func TestNULAndOperatorsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ query, want string }{
		{"a = 'x\x00y'", "arcql: 1:7: query holds a NUL character"},
		{"a\x00 = 1", "arcql: 1:2: query holds a NUL character"},
		{"a = 1\nAND \x00", "arcql: 2:5: query holds a NUL character"},
		{`a = 'x\u0000y'`, `arcql: 1:7: invalid \u escape: \u0000 (NUL) is not allowed in a string`},
		{`a = "\u0000"`, `arcql: 1:6: invalid \u escape: \u0000 (NUL) is not allowed in a string`},
		{"$where", "arcql: 1:1: expected a filter, found parameter $where"},
		{"$where = 'sleep(1000)'", "arcql: 1:1: expected a filter, found parameter $where"},
		{"a = 1 OR $where", "arcql: 1:10: expected a filter, found parameter $where"},
		{"$function = 1", "arcql: 1:1: expected a filter, found parameter $function"},
		{"$expr", "arcql: 1:1: expected a filter, found parameter $expr"},
		{"$accumulator = 1", "arcql: 1:1: expected a filter, found parameter $accumulator"},
		{`{"$where": "1"}`, "arcql: 1:1: unexpected character '{'"},
		{"a.$expr = 1", "arcql: 1:3: expected a name after '.' in a."},
	} {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.query, DefaultLimits())
			var e *Error
			if !errors.As(err, &e) || err.Error() != tt.want {
				t.Errorf("Parse(%q) = %v, want %q", tt.query, err, tt.want)
			}
		})
	}
	// A string may still hold the operators' names as text.
	for _, q := range []string{`a = '$where'`, `a = '{"$expr": 1}'`, `a = 'x\u0001y'`} {
		if _, err := Parse(q, DefaultLimits()); err != nil {
			t.Errorf("Parse(%q): %v, want a query", q, err)
		}
	}
}
