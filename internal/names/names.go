// Package names decides which strings may name an app, a release, a realm,
// a function or a function version: the one rule the directory (tenant),
// the schema's @fn bindings (schema), the function packages (fn) and the
// image registry (oci) all hold names to, so that a name one of them
// accepts is never refused by another.
//
// Names appear in URLs, store keys ("<app>/<release>") and image
// references ("<app>/<function>:<version>"), so they hold only letters,
// digits, '.', '_' and '-', start with a letter or digit (no "..", no
// leading '-' an option parser would read), and are at most MaxLen bytes.
package names

// MaxLen is the longest name, in bytes (every byte of a valid name is an
// ASCII character).
const MaxLen = 64

// Rule is the rule in words, for the messages that refuse a name.
const Rule = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"

// Valid reports whether s follows the rule: 1 to MaxLen letters, digits,
// '.', '_' or '-', the first a letter or digit.
func Valid(s string) bool {
	if s == "" || len(s) > MaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}
