package arcql

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/corehq/core/internal/whole"
)

// Parse reads an ArcQL query (see docs/arcql.md) within the limits lim (zero
// fields take the defaults). An empty query, or one whose filter is only
// "*", gives a Query with a nil Filter. And and Or nodes are flattened: a
// chain of ANDs, parenthesised or not, is one *And with every term.
//
// For a number literal Parse keeps the text as written in Value.Str beside
// its Num, so that a String field compared with 5.0 compares with "5.0".
//
// Every error is an *Error. Parse never panics, and its recursion is bounded
// by lim.MaxDepth, whatever the input.
func Parse(text string, lim Limits) (*Query, error) {
	lim = lim.withDefaults()
	if len(text) > lim.MaxBytes {
		return nil, &Error{Msg: "query is longer than " + strconv.Itoa(lim.MaxBytes) + " bytes"}
	}
	if !utf8.ValidString(text) {
		return nil, errorAt(invalidUTF8Pos(text), "query is not valid UTF-8")
	}
	if i := strings.IndexByte(text, 0); i >= 0 {
		// No stored text is matched with a NUL, and a NUL is where C
		// strings (and some drivers' keys) end: refused everywhere.
		return nil, errorAt(posOf(text, i), "query holds a NUL character")
	}
	if q, ok := parseIDEquals(text, lim); ok {
		return q, nil
	}
	return parse(text, lim)
}

// parse is Parse after its checks of the whole text: the parser.
func parse(text string, lim Limits) (*Query, error) {
	p := &parser{lx: newLexer(text, lim.MaxStringBytes), lim: lim}
	p.ahead = p.buf[:0]
	q, err := p.query()
	if err != nil {
		return nil, err
	}
	return q, nil
}

// posOf is the position of byte offset i of s.
func posOf(s string, i int) Pos {
	p := Pos{Line: 1, Col: 1}
	for _, r := range s[:i] {
		if r == '\n' {
			p.Line++
			p.Col = 1
		} else {
			p.Col++
		}
	}
	return p
}

// invalidUTF8Pos is the position of the first byte that is not UTF-8.
func invalidUTF8Pos(s string) Pos {
	p := Pos{Line: 1, Col: 1}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return p
			}
		}
		if r == '\n' {
			p.Line++
			p.Col = 1
		} else {
			p.Col++
		}
	}
	return p
}

// parser is a recursive-descent parser over the grammar of docs/arcql.md with up
// to three tokens of look-ahead (needed to tell a field named like a
// keyword from the keyword).
type parser struct {
	lx *lexer
	// ahead is the look-ahead, in buf while it fits.
	ahead       []token
	buf         [4]token
	lim         Limits
	depth       int
	comparisons int
}

// peek returns the token i places ahead without consuming it.
func (p *parser) peek(i int) (token, error) {
	for len(p.ahead) <= i {
		if n := len(p.ahead); n > 0 && p.ahead[n-1].kind == tEOF {
			return p.ahead[n-1], nil
		}
		t, err := p.lx.next()
		if err != nil {
			return token{}, err
		}
		p.ahead = append(p.ahead, t)
	}
	return p.ahead[i], nil
}

// next consumes and returns the next token.
func (p *parser) next() (token, error) {
	t, err := p.peek(0)
	if err != nil {
		return token{}, err
	}
	p.skip()
	return t, nil
}

// skip drops the token peek(0) has already read. The rest moves to the
// front, so that the look-ahead keeps its room.
func (p *parser) skip() {
	n := copy(p.ahead, p.ahead[1:])
	p.ahead = p.ahead[:n]
}

// isPath reports whether the name at look-ahead i starts a comparison, that
// is, is followed by an operator or by IN and a range. It lets a field be
// named like a keyword ("not = 1", "exist IN [1, 2]").
func (p *parser) isPath(i int) (bool, error) {
	t, err := p.peek(i + 1)
	if err != nil {
		return false, err
	}
	switch {
	case t.kind == tOp:
		return true, nil
	case t.kind == tStar, t.is("IN"):
		// "not * 'x'" is a field named not; "NOT *" negates match-all.
		// "exist IN [1,2]" is a field named exist; "EXIST in" tests one.
		u, err := p.peek(i + 2)
		if err != nil {
			return false, err
		}
		if t.kind == tStar {
			return u.isValue(), nil
		}
		return u.kind == tLBrack || u.kind == tLParen, nil
	}
	return false, nil
}

// keywords that can never start a path unless followed by an operator.
var reserved = []string{"AND", "OR", "NOT", "EXIST", "IN", "SORT", "ASC", "DESC", "TRUE", "FALSE", "NULL"}

func isReserved(t token) bool {
	for _, kw := range reserved {
		if t.is(kw) {
			return true
		}
	}
	return false
}

func (p *parser) query() (*Query, error) {
	q := &Query{}
	t, err := p.peek(0)
	if err != nil {
		return nil, err
	}
	if t.kind == tEOF {
		return q, nil
	}
	// "SORT a" has no filter; "sort = 1" filters on a field named sort.
	filter := true
	if t.is("SORT") {
		isPath, err := p.isPath(0)
		if err != nil {
			return nil, err
		}
		filter = isPath
	}
	if filter {
		if q.Filter, err = p.or(); err != nil {
			return nil, err
		}
		if _, ok := q.Filter.(*All); ok {
			q.Filter = nil
		}
	}
	if t, err = p.next(); err != nil {
		return nil, err
	}
	switch {
	case t.kind == tEOF:
		return q, nil
	case t.is("SORT"):
		if q.Sort, err = p.sortKeys(); err != nil {
			return nil, err
		}
		return q, nil
	}
	return nil, errorAt(t.pos, "expected AND, OR, SORT or end of input, found %s", t.describe())
}

// sortKeys reads `key { "," key }` after SORT.
func (p *parser) sortKeys() ([]SortKey, error) {
	var keys []SortKey
	after := "SORT"
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind != tName {
			return nil, errorAt(t.pos, "expected a field after %s, found %s", after, t.describe())
		}
		k := SortKey{Path: pathOf(t)}
		if t, err = p.next(); err != nil {
			return nil, err
		}
		if t.is("ASC") || t.is("DESC") {
			k.Desc = t.is("DESC")
			if t, err = p.next(); err != nil {
				return nil, err
			}
		}
		keys = append(keys, k)
		switch t.kind {
		case tEOF:
			return keys, nil
		case tComma:
			after = "','"
			continue
		}
		return nil, errorAt(t.pos, "expected ',', ASC, DESC or end of input after a sort key, found %s", t.describe())
	}
}

func pathOf(t token) Path {
	return Path{Parts: strings.Split(t.text, "."), Pos: t.pos}
}

// or reads `and { OR and }`.
func (p *parser) or() (Expr, error) {
	x, terms, err := p.chain("OR", (*parser).and, true)
	if err != nil || terms == nil {
		return x, err
	}
	return &Or{Terms: terms}, nil
}

// and reads `unary { AND unary }`.
func (p *parser) and() (Expr, error) {
	x, terms, err := p.chain("AND", (*parser).unary, false)
	if err != nil || terms == nil {
		return x, err
	}
	return &And{Terms: terms}, nil
}

// chain reads `next { op next }`: the one operand x when there is no op,
// or else the chain's terms, flattened (appendTerms).
func (p *parser) chain(op string, next func(*parser) (Expr, error), or bool) (x Expr, terms []Expr, err error) {
	if x, err = next(p); err != nil {
		return nil, nil, err
	}
	for {
		t, err := p.peek(0)
		if err != nil {
			return nil, nil, err
		}
		if !t.is(op) {
			return x, terms, nil
		}
		p.skip()
		y, err := next(p)
		if err != nil {
			return nil, nil, err
		}
		if terms == nil {
			terms = appendTerms(nil, x, or)
		}
		terms = appendTerms(terms, y, or)
	}
}

// appendTerms appends x to terms, or x's own terms when x is a node of the
// same kind (from parentheses), so that a chain has one canonical shape.
func appendTerms(terms []Expr, x Expr, or bool) []Expr {
	switch n := x.(type) {
	case *And:
		if !or {
			return append(terms, n.Terms...)
		}
	case *Or:
		if or {
			return append(terms, n.Terms...)
		}
	}
	return append(terms, x)
}

// nest enters one level of nesting at pos, failing past MaxDepth.
func (p *parser) nest(pos Pos) error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return errorAt(pos, "query is nested more than %d levels deep", p.lim.MaxDepth)
	}
	return nil
}

// unary reads `NOT unary | primary`.
func (p *parser) unary() (Expr, error) {
	t, err := p.peek(0)
	if err != nil {
		return nil, err
	}
	if t.is("NOT") {
		isPath, err := p.isPath(0)
		if err != nil {
			return nil, err
		}
		if !isPath {
			p.skip()
			if err := p.nest(t.pos); err != nil {
				return nil, err
			}
			x, err := p.unary()
			if err != nil {
				return nil, err
			}
			p.depth--
			return &Not{X: x}, nil
		}
	}
	return p.primary()
}

// primary reads a parenthesised expression, "*", EXIST path, or a
// comparison.
func (p *parser) primary() (Expr, error) {
	t, err := p.peek(0)
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tLParen:
		p.skip()
		if err := p.nest(t.pos); err != nil {
			return nil, err
		}
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		c, err := p.next()
		if err != nil {
			return nil, err
		}
		if c.kind != tRParen {
			return nil, errorAt(c.pos, "expected ')' to close the '(' at %d:%d, found %s", t.pos.Line, t.pos.Col, c.describe())
		}
		p.depth--
		return x, nil
	case tStar:
		p.skip()
		return &All{}, nil
	case tName:
		isPath, err := p.isPath(0)
		if err != nil {
			return nil, err
		}
		switch {
		case isPath:
			return p.comparison()
		case t.is("EXIST"):
			p.skip()
			f, err := p.next()
			if err != nil {
				return nil, err
			}
			if f.kind != tName {
				return nil, errorAt(f.pos, "expected a field after EXIST, found %s", f.describe())
			}
			if err := p.count(f.pos); err != nil {
				return nil, err
			}
			return &Exist{Path: pathOf(f)}, nil
		case isReserved(t):
			return nil, errorAt(t.pos, "expected a filter, found %s", t.describe())
		}
		// A path without an operator: comparison reports what is missing.
		return p.comparison()
	}
	return nil, errorAt(t.pos, "expected a filter, found %s", t.describe())
}

// count counts one comparison at pos, failing past MaxComparisons.
func (p *parser) count(pos Pos) error {
	p.comparisons++
	if p.comparisons > p.lim.MaxComparisons {
		return errorAt(pos, "query has more than %d comparisons", p.lim.MaxComparisons)
	}
	return nil
}

// comparison reads `path op value` or `path IN range`.
func (p *parser) comparison() (Expr, error) {
	f, err := p.next()
	if err != nil {
		return nil, err
	}
	path := pathOf(f)
	if err := p.count(f.pos); err != nil {
		return nil, err
	}
	o, err := p.next()
	if err != nil {
		return nil, err
	}
	switch {
	case o.kind == tOp || o.kind == tStar:
		v, err := p.value("after '" + o.text + "'")
		if err != nil {
			return nil, err
		}
		if o.op == OpWildcard && v.Kind == KindString {
			if n := strings.Count(v.Str, "*"); n > p.lim.MaxWildcards {
				return nil, errorAt(v.Pos, "wildcard pattern has more than %d '*'", p.lim.MaxWildcards)
			}
		}
		return &Compare{Path: path, Op: o.op, Value: v}, nil
	case o.is("IN"):
		return p.rangeAfter(path)
	}
	return nil, errorAt(o.pos, "expected an operator after %s, found %s", f.text, o.describe())
}

// rangeAfter reads `( "[" | "(" ) value "," value ( "]" | ")" )`.
func (p *parser) rangeAfter(path Path) (Expr, error) {
	open, err := p.next()
	if err != nil {
		return nil, err
	}
	if open.kind != tLBrack && open.kind != tLParen {
		return nil, errorAt(open.pos, "expected '[' or '(' after IN, found %s", open.describe())
	}
	r := &Range{Path: path, LoIncl: open.kind == tLBrack}
	if r.Lo, err = p.value("after '" + open.text + "'"); err != nil {
		return nil, err
	}
	c, err := p.next()
	if err != nil {
		return nil, err
	}
	if c.kind != tComma {
		return nil, errorAt(c.pos, "expected ',' between the bounds of a range, found %s", c.describe())
	}
	if r.Hi, err = p.value("after ','"); err != nil {
		return nil, err
	}
	closer, err := p.next()
	if err != nil {
		return nil, err
	}
	if closer.kind != tRBrack && closer.kind != tRParen {
		return nil, errorAt(closer.pos, "expected ']' or ')' to close the range, found %s", closer.describe())
	}
	r.HiIncl = closer.kind == tRBrack
	return r, nil
}

// value reads a literal; where says what it follows, for the error.
func (p *parser) value(where string) (Value, error) {
	t, err := p.next()
	if err != nil {
		return Value{}, err
	}
	v := Value{Pos: t.pos}
	switch {
	case t.kind == tString:
		v.Kind, v.Str = KindString, t.text
	case t.kind == tNumber:
		n, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(n, 0) {
			return Value{}, errorAt(t.pos, "number %s is out of range", t.text)
		}
		v.Kind, v.Num, v.Str = KindNumber, n, t.text
		v.Int, v.IsInt = whole.BeyondFloat(t.text)
	case t.kind == tParam:
		v.Kind, v.Str = KindParam, t.text
	case t.is("TRUE"), t.is("FALSE"):
		v.Kind, v.Bool = KindBool, t.is("TRUE")
	case t.is("NULL"):
		v.Kind = KindNull
	case t.kind == tName && !isReserved(t):
		return Value{}, errorAt(t.pos, "expected a value %s, found %s (strings are quoted: %s)", where, t.describe(), quote(t.text))
	default:
		return Value{}, errorAt(t.pos, "expected a value %s, found %s", where, t.describe())
	}
	return v, nil
}
