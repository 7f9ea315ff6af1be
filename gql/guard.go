package gql

import (
	"github.com/graphql-go/graphql/language/ast"

	"github.com/corehq/core/errcode"
)

// maxNesting bounds how deep `{`, `[` and `(` nest in a document:
// selection sets (MaxDepth of them, checked exactly after parsing),
// arguments and the input objects and lists inside them.
const maxNesting = 64

// guard measures a document's text in one pass before any parser sees
// it: bracket nesting (maxNesting), tokens (cfg.MaxTokens) and aliases
// (cfg.MaxAliases). graphql-go's parser and validation recurse and are,
// on hostile shapes, super-linear; what passes the guard is small enough
// for them. Strings, block strings and comments are skipped as the
// lexer skips them; the guard never allocates.
func guard(text string, cfg Config) error {
	depth, parens, tokens, aliases := 0, 0, 0, 0
	prevName := false // the last token was a name
	for i := 0; i < len(text); {
		c := text[i]
		class := byteClass[c]
		if class == classSpace {
			i++
			continue
		}
		if c == '#' {
			for i < len(text) && text[i] != '\n' && text[i] != '\r' {
				i++
			}
			continue
		}
		tokens++
		if tokens > cfg.MaxTokens {
			return tooComplex("the document has more than %d tokens", cfg.MaxTokens)
		}
		if class == className {
			for i++; i < len(text) && byteClass[text[i]] >= className; i++ {
			}
			prevName = true
			continue
		}
		if class == classDigit || c == '-' {
			// A number: digits, letters (an exponent) and dots.
			for i++; i < len(text) && (byteClass[text[i]] >= className || text[i] == '.'); i++ {
			}
			prevName = false
			continue
		}
		switch c {
		case '{', '[', '(':
			depth++
			if c == '(' {
				parens++
			}
			if depth > maxNesting {
				return tooComplex("the document nests brackets deeper than %d levels", maxNesting)
			}
			i++
		case '}', ']', ')':
			if depth > 0 {
				depth--
			}
			if c == ')' && parens > 0 {
				parens--
			}
			i++
		case ':':
			// A name and a colon outside parentheses is an alias;
			// inside them it is an argument or an input object field.
			if prevName && parens == 0 {
				aliases++
				if aliases > cfg.MaxAliases {
					return tooComplex("the document has more than %d aliases", cfg.MaxAliases)
				}
			}
			i++
		case '"':
			i = skipString(text, i)
		case '.':
			if i+2 < len(text) && text[i+1] == '.' && text[i+2] == '.' {
				i += 3
			} else {
				i++
			}
		default:
			// Punctuation, and anything the parser will refuse: one token
			// per byte is an upper bound for them.
			i++
		}
		prevName = false
	}
	return nil
}

// Byte classes of the guard's scan.
const (
	classOther = iota
	classSpace // white space and commas, which GraphQL ignores
	className  // a letter or '_', which starts a name
	classDigit // continues a name
)

var byteClass = func() (t [256]uint8) {
	for _, c := range []byte(" \t\n\r,") {
		t[c] = classSpace
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = className, className
	}
	t['_'] = className
	for c := '0'; c <= '9'; c++ {
		t[c] = classDigit
	}
	return t
}()

// skipString returns the index after the string or block string that
// starts at text[i] (an unterminated one runs to the end).
func skipString(text string, i int) int {
	if i+2 < len(text) && text[i+1] == '"' && text[i+2] == '"' {
		for i += 3; i < len(text); i++ {
			switch {
			case text[i] == '\\' && i+3 < len(text) && text[i+1] == '"' && text[i+2] == '"' && text[i+3] == '"':
				i += 3
			case text[i] == '"' && i+2 < len(text) && text[i+1] == '"' && text[i+2] == '"':
				return i + 3
			}
		}
		return len(text)
	}
	for i++; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"', '\n', '\r':
			return i + 1
		}
	}
	return len(text)
}

// fragmentCost bounds what fragment spreads expand to before validation
// walks them: the fields of each operation with every spread expanded,
// counted once per fragment (memoized, so in linear time), must not pass
// cfg.MaxComplexity. Without it, fragments that each spread the next
// twice make validation's work exponential in a small document.
func fragmentCost(doc *ast.Document, cfg Config) error {
	frags := fragments(doc)
	size := map[string]int{}
	var count func(set *ast.SelectionSet) int
	count = func(set *ast.SelectionSet) int {
		if set == nil {
			return 0
		}
		n := 0
		for _, sel := range set.Selections {
			switch sel := sel.(type) {
			case *ast.Field:
				n += 1 + count(sel.SelectionSet)
			case *ast.InlineFragment:
				n += count(sel.SelectionSet)
			case *ast.FragmentSpread:
				name := sel.Name.Value
				s, ok := size[name]
				if !ok {
					size[name] = 0 // a cycle counts nothing here; fragmentCycle refuses it
					if f := frags[name]; f != nil {
						s = count(f.SelectionSet)
					}
					size[name] = s
				}
				n += s
			}
			if n > cfg.MaxComplexity {
				n = cfg.MaxComplexity + 1 // saturate: the sum cannot overflow
			}
		}
		return n
	}
	for _, d := range doc.Definitions {
		if op, ok := d.(*ast.OperationDefinition); ok && count(op.SelectionSet) > cfg.MaxComplexity {
			return tooComplex("the document's fragments expand to more than %d fields", cfg.MaxComplexity)
		}
	}
	for _, f := range frags {
		if count(f.SelectionSet) > cfg.MaxComplexity {
			return tooComplex("the document's fragments expand to more than %d fields", cfg.MaxComplexity)
		}
	}
	return nil
}

func tooComplex(format string, args ...any) error {
	return errcode.New(errcode.TooComplex, format, args...)
}
