package names

import (
	"fmt"
	"strings"
	"testing"
)

// TestValid: the rule's edges, each on its own.
func TestValid(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		s    string
		want bool
	}{
		{"one letter", "a", true},
		{"one digit", "7", true},
		{"every allowed character", "Book-store_2.v1", true},
		{"MaxLen bytes", strings.Repeat("a", MaxLen), true},
		{"one byte over MaxLen", strings.Repeat("a", MaxLen+1), false},
		{"twice MaxLen", strings.Repeat("a", 2*MaxLen), false},
		{"empty", "", false},
		{"starting with a dot", ".hidden", false},
		{"starting with '-'", "-rf", false},
		{"starting with '_'", "_a", false},
		{"a slash", "../f", false},
		{"a space", "a b", false},
		{"a colon", "app:v1", false},
		{"a NUL byte", "a\x00", false},
		{"a non-ASCII letter", "café", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Valid(c.s); got != c.want {
				t.Errorf("Valid(%q) = %v, want %v", c.s, got, c.want)
			}
		})
	}
}

// TestRuleSaysMaxLen: the words the messages quote name the same limit
// Valid holds.
func TestRuleSaysMaxLen(t *testing.T) {
	t.Parallel()
	if want := fmt.Sprintf("1 to %d ", MaxLen); !strings.HasPrefix(Rule, want) {
		t.Errorf("Rule %q does not start with %q", Rule, want)
	}
}
