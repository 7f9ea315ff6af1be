package arcql

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Match reports whether the record v satisfies the bound expression e.
// A nil expression and *All match every record. A *Hop must have been
// resolved into an *InIDs by the store first: Match cannot follow a
// reference, so it answers false for a *Hop rather than guess.
//
// Match is pure and safe for concurrent use; it does not allocate on the
// common paths (one field, scalar values).
func Match(e Expr, v Valuer) bool {
	switch e := e.(type) {
	case nil:
		return true
	case *All:
		return true
	case *And:
		for _, t := range e.Terms {
			if !Match(t, v) {
				return false
			}
		}
		return true
	case *Or:
		for _, t := range e.Terms {
			if Match(t, v) {
				return true
			}
		}
		return false
	case *Not:
		return !Match(e.X, v)
	case *Exist:
		return exists(v, e.Path)
	case *Compare:
		return matchCompare(e, v)
	case *Range:
		return matchRange(e, v)
	case *InIDs:
		return matchInIDs(e, v)
	case *Hop:
		return false
	}
	return false
}

// root returns the value the first part of p names, and the parts below it.
// A path that was not bound (Parts "core", "id") still reaches metadata, so
// that Match is forgiving of a caller that skipped Bind for core fields.
func root(v Valuer, p Path) (any, []string, bool) {
	if len(p.Parts) == 0 {
		return nil, nil, false
	}
	if len(p.Parts) >= 2 && p.Parts[0] == "core" {
		x, ok := v.Value("core." + p.Parts[1])
		return x, p.Parts[2:], ok
	}
	x, ok := v.Value(p.Parts[0])
	return x, p.Parts[1:], ok
}

// someLeaf reports whether test holds for some value at the path rest
// below x. Lists are crossed element-wise at every level, both on the way
// down and at the end, which gives list fields their "some element"
// meaning. A missing key yields no value at all; a present null yields nil.
func someLeaf(x any, rest []string, test func(any) bool) bool {
	switch l := x.(type) {
	case []any:
		for _, el := range l {
			if someLeaf(el, rest, test) {
				return true
			}
		}
		return false
	case []string:
		for _, el := range l {
			if someLeaf(el, rest, test) {
				return true
			}
		}
		return false
	}
	if len(rest) == 0 {
		return test(x)
	}
	m, ok := x.(map[string]any)
	if !ok {
		return false
	}
	child, ok := m[rest[0]]
	if !ok {
		return false
	}
	return someLeaf(child, rest[1:], test)
}

// anyAt reports whether test holds for some value at path p of v.
func anyAt(v Valuer, p Path, test func(any) bool) bool {
	x, rest, ok := root(v, p)
	if !ok {
		return false
	}
	return someLeaf(x, rest, test)
}

func notNil(x any) bool { return x != nil }

// exists: some non-null value is at the path; an empty list has no values.
func exists(v Valuer, p Path) bool { return anyAt(v, p, notNil) }

func matchCompare(c *Compare, v Valuer) bool {
	val := &c.Value
	if val.Kind == KindNull {
		// `f = null` is NOT EXIST f; `f != null` is EXIST f. Null has no
		// order and no text, so every other operator never matches.
		switch c.Op {
		case OpEq:
			return !exists(v, c.Path)
		case OpNe:
			return exists(v, c.Path)
		}
		return false
	}
	switch c.Op {
	case OpEq:
		return anyAt(v, c.Path, func(x any) bool { return equalValue(x, val) })
	case OpNe:
		// No element equals: the exact negation of OpEq, so a missing
		// field matches, as it does for NOT (f = v).
		return !anyAt(v, c.Path, func(x any) bool { return equalValue(x, val) })
	case OpLt:
		return anyAt(v, c.Path, func(x any) bool { c, ok := orderValue(x, val); return ok && c < 0 })
	case OpLe:
		return anyAt(v, c.Path, func(x any) bool { c, ok := orderValue(x, val); return ok && c <= 0 })
	case OpGt:
		return anyAt(v, c.Path, func(x any) bool { c, ok := orderValue(x, val); return ok && c > 0 })
	case OpGe:
		return anyAt(v, c.Path, func(x any) bool { c, ok := orderValue(x, val); return ok && c >= 0 })
	case OpWords:
		if val.Kind != KindString {
			return false
		}
		return anyAt(v, c.Path, func(x any) bool {
			var buf [64]byte
			s, ok := leafText(x, buf[:0])
			return ok && hasWords(s, val.Str)
		})
	case OpPrefix:
		if val.Kind != KindString {
			return false
		}
		return anyAt(v, c.Path, func(x any) bool {
			var buf [64]byte
			s, ok := leafText(x, buf[:0])
			return ok && strings.HasPrefix(s, val.Str)
		})
	case OpWildcard:
		if val.Kind != KindString {
			return false
		}
		return anyAt(v, c.Path, func(x any) bool {
			var buf [64]byte
			s, ok := leafText(x, buf[:0])
			return ok && wildcard(val.Str, s)
		})
	}
	return false
}

func matchRange(r *Range, v Valuer) bool {
	lo, hi := &r.Lo, &r.Hi
	return anyAt(v, r.Path, func(x any) bool {
		c, ok := orderValue(x, lo)
		if !ok || c < 0 || (c == 0 && !r.LoIncl) {
			return false
		}
		c, ok = orderValue(x, hi)
		return ok && (c < 0 || (c == 0 && r.HiIncl))
	})
}

func matchInIDs(in *InIDs, v Valuer) bool {
	p := Path{Parts: []string{in.Field}}
	if !strings.HasPrefix(in.Field, "core.") && strings.Contains(in.Field, ".") {
		// A reference inside an embedded object: Bind writes its path dotted.
		p.Parts = strings.Split(in.Field, ".")
	}
	return anyAt(v, p, func(x any) bool {
		s, ok := x.(string)
		if !ok {
			return false
		}
		if in.Set != nil {
			_, ok := in.Set[s]
			return ok
		}
		for _, id := range in.IDs {
			if id == s {
				return true
			}
		}
		return false
	})
}

// equalValue reports whether the stored value x equals the literal val.
// Values of different kinds are never equal (below a Json field nothing is
// coerced), except that numbers compare numerically whatever their Go type
// and a timestamp equals another instant however it is written.
func equalValue(x any, val *Value) bool {
	switch val.Kind {
	case KindString:
		s, ok := x.(string)
		return ok && s == val.Str
	case KindNumber:
		n, ok := toNumber(x)
		return ok && compareNumbers(n, val.number()) == 0
	case KindBool:
		b, ok := x.(bool)
		return ok && b == val.Bool
	case KindTime:
		t, ok := leafTime(x)
		return ok && t.Equal(val.Time)
	}
	return false
}

// orderValue compares the stored value x with the literal val. ok is false
// when they have no common order (null, booleans, mismatched kinds), and
// then no ordered comparison matches.
func orderValue(x any, val *Value) (c int, ok bool) {
	switch val.Kind {
	case KindString:
		if s, isStr := x.(string); isStr {
			return strings.Compare(s, val.Str), true
		}
		if t, isTime := x.(time.Time); isTime {
			// An unbound literal against a metadata timestamp.
			if lt, err := parseTime(val.Str); err == nil {
				return t.Compare(lt), true
			}
		}
	case KindNumber:
		if n, isNum := toNumber(x); isNum {
			return compareNumbers(n, val.number()), true
		}
	case KindTime:
		if t, isTime := leafTime(x); isTime {
			return t.Compare(val.Time), true
		}
	}
	return 0, false
}

// leafTime reads a stored timestamp: a time.Time (metadata) or an ISO-8601
// string (DateTime fields).
func leafTime(x any) (time.Time, bool) {
	switch t := x.(type) {
	case time.Time:
		return t, true
	case string:
		pt, err := parseTime(t)
		return pt, err == nil
	}
	return time.Time{}, false
}

// leafText is the text that ~, ^ and * look at: a string as is, a number as
// its shortest decimal text, a timestamp in RFC 3339 UTC. buf is scratch
// space so that numbers need not allocate.
func leafText(x any, buf []byte) (string, bool) {
	switch t := x.(type) {
	case string:
		return t, true
	case time.Time:
		return t.UTC().Format(time.RFC3339Nano), true
	}
	if n, ok := toNumber(x); ok {
		return string(n.appendText(buf)), true
	}
	return "", false
}

// hasWords reports whether every word of query occurs as a word of text,
// ignoring case. A query with no words matches nothing: there is nothing to
// look for, and Bind rejects it anyway.
func hasWords(text, query string) bool {
	found := false
	for q, rest := nextWord(query); q != ""; q, rest = nextWord(rest) {
		if !hasWord(text, q) {
			return false
		}
		found = true
	}
	return found
}

func hasWord(text, w string) bool {
	for t, rest := nextWord(text); t != ""; t, rest = nextWord(rest) {
		if strings.EqualFold(t, w) {
			return true
		}
	}
	return false
}

// nextWord returns the first word of s and what follows it. A word is a
// run of letters and digits; combining marks belong to the word they follow
// so that decomposed accents do not split one.
func nextWord(s string) (word, rest string) {
	start := -1
	for i, r := range s {
		w := isWordRune(r)
		if start < 0 && w && !unicode.IsMark(r) {
			start = i
		} else if start >= 0 && !w {
			return s[start:i], s[i:]
		}
	}
	if start < 0 {
		return "", ""
	}
	return s[start:], ""
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// wildcard reports whether s as a whole matches pattern, where '*' matches
// any run of characters and '?' exactly one. It is the classic greedy
// matcher that remembers only the last '*': on a mismatch it retries from
// that star one character further on. That is O(len(pattern)·len(s)) in the
// worst case and never exponential, whatever the pattern.
func wildcard(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0 // position after the last '*', and where s resumed
	for i < len(s) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				p++
				star, mark = p, i
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[i:])
				p++
				i += n
				continue
			default:
				_, n := utf8.DecodeRuneInString(pattern[p:])
				if i+n <= len(s) && pattern[p:p+n] == s[i:i+n] {
					p += n
					i += n
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[mark:])
		mark += n
		p, i = star, mark
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
