package arcql

import (
	"strconv"
	"strings"
)

// String returns the query in canonical ArcQL text: keywords in upper case,
// single-quoted strings, the fewest parentheses, "*" for a nil filter, and
// ASC left out. For a parsed query, Parse(q.String()) gives q back (up to
// positions). A bound query prints too, but its *Hop and *InIDs nodes have
// no ArcQL syntax; they print as `field -> Type(sub)` and
// `field IN IDS('a', 'b')`, for logs and tests only.
func (q *Query) String() string {
	var b strings.Builder
	if q.Filter == nil {
		b.WriteString("*")
	} else {
		writeExpr(&b, q.Filter, precOr)
	}
	for i, k := range q.Sort {
		if i == 0 {
			b.WriteString(" SORT ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(k.Path.String())
		if k.Desc {
			b.WriteString(" DESC")
		}
	}
	return b.String()
}

// Format returns the canonical text of one expression ("*" for nil).
func Format(e Expr) string {
	if e == nil {
		return "*"
	}
	var b strings.Builder
	writeExpr(&b, e, precOr)
	return b.String()
}

// Precedences, loosest first: where an expression of lower precedence than
// its context appears, it needs parentheses.
const (
	precOr = iota
	precAnd
	precUnary
)

func writeExpr(b *strings.Builder, e Expr, ctx int) {
	switch e := e.(type) {
	case *Or:
		writeTerms(b, e.Terms, " OR ", precOr, precAnd, ctx)
	case *And:
		writeTerms(b, e.Terms, " AND ", precAnd, precUnary, ctx)
	case *Not:
		b.WriteString("NOT ")
		writeExpr(b, e.X, precUnary)
	case *All:
		b.WriteString("*")
	case *Exist:
		b.WriteString("EXIST ")
		b.WriteString(e.Path.String())
	case *Compare:
		b.WriteString(e.Path.String())
		b.WriteString(" ")
		b.WriteString(e.Op.String())
		b.WriteString(" ")
		writeValue(b, e.Value)
	case *Range:
		b.WriteString(e.Path.String())
		b.WriteString(" IN ")
		if e.LoIncl {
			b.WriteString("[")
		} else {
			b.WriteString("(")
		}
		writeValue(b, e.Lo)
		b.WriteString(", ")
		writeValue(b, e.Hi)
		if e.HiIncl {
			b.WriteString("]")
		} else {
			b.WriteString(")")
		}
	case *Hop:
		b.WriteString(e.Field)
		b.WriteString(" -> ")
		b.WriteString(e.Target)
		b.WriteString("(")
		writeExpr(b, e.Sub, precOr)
		b.WriteString(")")
	case *InIDs:
		b.WriteString(e.Field)
		if e.Digest != "" {
			b.WriteString(" IN IDS(")
			b.WriteString(strconv.Itoa(len(e.IDs)))
			b.WriteString(" ids, sha256 ")
			b.WriteString(e.Digest)
			b.WriteString(")")
			return
		}
		b.WriteString(" IN IDS(")
		for i, id := range e.IDs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(id))
		}
		b.WriteString(")")
	case nil:
		b.WriteString("*")
	}
}

// writeTerms writes an And or Or: prec is its own precedence, sub the one
// each term is written at, ctx the surrounding one.
func writeTerms(b *strings.Builder, terms []Expr, sep string, prec, sub, ctx int) {
	if len(terms) == 0 {
		// An empty And is true and an empty Or false; Parse never makes
		// either, but a hand-built one should still print as valid ArcQL.
		if prec == precAnd {
			b.WriteString("*")
		} else {
			b.WriteString("NOT *")
		}
		return
	}
	paren := ctx > prec
	if paren {
		b.WriteString("(")
	}
	for i, t := range terms {
		if i > 0 {
			b.WriteString(sep)
		}
		writeExpr(b, t, sub)
	}
	if paren {
		b.WriteString(")")
	}
}

func writeValue(b *strings.Builder, v Value) {
	switch v.Kind {
	case KindNull:
		b.WriteString("null")
	case KindBool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case KindNumber:
		if v.Str != "" && isNumberText(v.Str) {
			b.WriteString(v.Str)
		} else {
			b.WriteString(strconv.FormatFloat(v.Num, 'g', -1, 64))
		}
	case KindString, KindTime:
		b.WriteString(quote(v.Str))
	case KindParam:
		b.WriteString("$" + v.Str)
	}
}

// isNumberText reports whether s is a number as the grammar writes one.
func isNumberText(s string) bool {
	l := newLexer(s, 0)
	t, err := l.lexNumber()
	return err == nil && t.text == s
}

// String returns the operator as written in ArcQL.
func (o Op) String() string {
	switch o {
	case OpEq:
		return "="
	case OpNe:
		return "!="
	case OpLt:
		return "<"
	case OpLe:
		return "<="
	case OpGt:
		return ">"
	case OpGe:
		return ">="
	case OpWords:
		return "~"
	case OpPrefix:
		return "^"
	case OpWildcard:
		return "*"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// quote writes s as a single-quoted ArcQL string, escaping what the
// grammar requires and control characters.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
