package names

import (
	"fmt"
	"strings"
	"testing"
)

// TestValid: the rule's edges, each on its own.
func TestValid(t *testing.T) {
	t.Parallel()
	valid := []string{
		"a", "7", // one letter, one digit
		"Book-store_2.v1",           // every allowed character
		strings.Repeat("a", MaxLen), // MaxLen bytes
	}
	invalid := []string{
		"",                            // empty
		strings.Repeat("a", MaxLen+1), // one byte over MaxLen
		strings.Repeat("a", 2*MaxLen), // twice MaxLen
		".hidden", "-rf", "_a",        // not starting with a letter or digit
		"../f", "a b", "app:v1", "a\x00", // a slash, a space, a colon, a NUL byte
		"café", // a non-ASCII letter
	}
	for _, s := range valid {
		if !Valid(s) {
			t.Errorf("Valid(%q) = false, want true", s)
		}
	}
	for _, s := range invalid {
		if Valid(s) {
			t.Errorf("Valid(%q) = true, want false", s)
		}
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
