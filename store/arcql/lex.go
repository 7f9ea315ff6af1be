package arcql

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tEOF    tokKind = iota
	tName           // a path: ident { "." ident }, keywords included
	tString         // text holds the decoded value
	tNumber         // text holds the literal as written
	tOp             // = != < <= > >= ~ ^ (op set)
	tStar           // * : match-all or the wildcard operator, by position
	tLParen
	tRParen
	tLBrack
	tRBrack
	tComma
	tParam // $name: text holds the name without '$'
)

type token struct {
	kind tokKind
	text string
	op   Op
	pos  Pos
}

// describe names the token for "found …" in error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		s := t.text
		if utf8.RuneCountInString(s) > 20 {
			r := []rune(s)
			s = string(r[:20]) + "…"
		}
		return "string " + quote(s)
	case tNumber:
		return "number " + t.text
	case tParam:
		return "parameter $" + t.text
	}
	return "'" + t.text + "'"
}

// is reports whether t is the keyword kw (given in upper case). Keywords
// are case-insensitive.
func (t token) is(kw string) bool {
	return t.kind == tName && strings.EqualFold(t.text, kw)
}

// isValue reports whether t starts a value: a string, a number or one of
// the keywords true, false, null.
func (t token) isValue() bool {
	return t.kind == tString || t.kind == tNumber || t.kind == tParam || t.is("TRUE") || t.is("FALSE") || t.is("NULL")
}

// lexer splits query text into tokens on demand. The text has been checked
// to be valid UTF-8 and within MaxBytes.
type lexer struct {
	src       string
	off       int
	line, col int
	maxString int
}

func newLexer(src string, maxString int) *lexer {
	return &lexer{src: src, line: 1, col: 1, maxString: maxString}
}

func (l *lexer) pos() Pos { return Pos{Line: l.line, Col: l.col} }

// peekByte returns the byte at off+i, or 0 past the end.
func (l *lexer) peekByte(i int) byte {
	if l.off+i < len(l.src) {
		return l.src[l.off+i]
	}
	return 0
}

// advance moves past one rune, keeping line and column.
func (l *lexer) advance() rune {
	r, n := utf8.DecodeRuneInString(l.src[l.off:])
	l.off += n
	if r == '\n' {
		l.line++
		l.col = 1
	} else {
		l.col++
	}
	return r
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentByte(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// next returns the next token, or an error for text that is no token.
func (l *lexer) next() (token, error) {
	for l.off < len(l.src) {
		c := l.src[l.off]
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		l.advance()
	}
	start, p := l.off, l.pos()
	if l.off >= len(l.src) {
		return token{kind: tEOF, pos: p}, nil
	}
	c := l.src[l.off]
	punct := func(k tokKind, n int, op Op) (token, error) {
		for range n {
			l.advance()
		}
		return token{kind: k, text: l.src[start:l.off], op: op, pos: p}, nil
	}
	switch {
	case c == '(':
		return punct(tLParen, 1, 0)
	case c == ')':
		return punct(tRParen, 1, 0)
	case c == '[':
		return punct(tLBrack, 1, 0)
	case c == ']':
		return punct(tRBrack, 1, 0)
	case c == ',':
		return punct(tComma, 1, 0)
	case c == '*':
		return punct(tStar, 1, OpWildcard)
	case c == '=':
		return punct(tOp, 1, OpEq)
	case c == '~':
		return punct(tOp, 1, OpWords)
	case c == '^':
		return punct(tOp, 1, OpPrefix)
	case c == '!' && l.peekByte(1) == '=':
		return punct(tOp, 2, OpNe)
	case c == '<' && l.peekByte(1) == '=':
		return punct(tOp, 2, OpLe)
	case c == '<':
		return punct(tOp, 1, OpLt)
	case c == '>' && l.peekByte(1) == '=':
		return punct(tOp, 2, OpGe)
	case c == '>':
		return punct(tOp, 1, OpGt)
	case c == '\'' || c == '"':
		return l.lexString()
	case isDigit(c) || c == '-' && isDigit(l.peekByte(1)):
		return l.lexNumber()
	case isIdentStart(c):
		return l.lexName()
	case c == '$' && isIdentStart(l.peekByte(1)):
		l.advance()
		n := l.off
		for l.off < len(l.src) && isIdentByte(l.src[l.off]) {
			l.advance()
		}
		return token{kind: tParam, text: l.src[n:l.off], pos: p}, nil
	}
	r, _ := utf8.DecodeRuneInString(l.src[l.off:])
	if c == '!' {
		return token{}, errorAt(p, "unexpected character '!' (the operator is '!=')")
	}
	return token{}, errorAt(p, "unexpected character %s", strconv.QuoteRune(r))
}

// lexName reads a path: identifiers joined by dots, with no spaces.
func (l *lexer) lexName() (token, error) {
	start, p := l.off, l.pos()
	for {
		for l.off < len(l.src) && isIdentByte(l.src[l.off]) {
			l.advance()
		}
		if l.peekByte(0) != '.' {
			break
		}
		l.advance()
		if !isIdentStart(l.peekByte(0)) {
			return token{}, errorAt(l.pos(), "expected a name after '.' in %s", l.src[start:l.off])
		}
	}
	return token{kind: tName, text: l.src[start:l.off], pos: p}, nil
}

// lexNumber reads -?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (l *lexer) lexNumber() (token, error) {
	start, p := l.off, l.pos()
	digits := func() int {
		n := 0
		for l.off < len(l.src) && isDigit(l.src[l.off]) {
			l.advance()
			n++
		}
		return n
	}
	if l.peekByte(0) == '-' {
		l.advance()
	}
	digits()
	if l.peekByte(0) == '.' {
		l.advance()
		if digits() == 0 {
			return token{}, errorAt(p, "malformed number %s: expected a digit after '.'", l.src[start:l.off])
		}
	}
	if c := l.peekByte(0); c == 'e' || c == 'E' {
		l.advance()
		if c := l.peekByte(0); c == '+' || c == '-' {
			l.advance()
		}
		if digits() == 0 {
			return token{}, errorAt(p, "malformed number %s: expected a digit in the exponent", l.src[start:l.off])
		}
	}
	if isIdentStart(l.peekByte(0)) {
		return token{}, errorAt(p, "malformed number %s%c", l.src[start:l.off], l.peekByte(0))
	}
	return token{kind: tNumber, text: l.src[start:l.off], pos: p}, nil
}

// lexString reads a quoted string and decodes its escapes: \' \" \\ \n \t
// and \uXXXX (a UTF-16 surrogate pair written as two escapes is one
// character; a lone surrogate is an error).
//
// A literal without escapes is a slice of the source (which Parse checked
// is UTF-8, so it reads as the decoded runes would); the first escape
// starts a copy.
func (l *lexer) lexString() (token, error) {
	p := l.pos()
	q := l.advance()
	start := l.off
	var b strings.Builder
	escaped := false
	for {
		if l.off >= len(l.src) {
			return token{}, errorAt(p, "unterminated string")
		}
		n := l.off - start
		if escaped {
			n = b.Len()
		}
		if n > l.maxString {
			return token{}, errorAt(p, "string literal is longer than %d bytes", l.maxString)
		}
		ep, end := l.pos(), l.off
		r := l.advance()
		switch {
		case r == q && !escaped:
			return token{kind: tString, text: l.src[start:end], pos: p}, nil
		case r == q:
			return token{kind: tString, text: b.String(), pos: p}, nil
		case r == '\\':
			if !escaped {
				b.WriteString(l.src[start:end])
				escaped = true
			}
			r, err := l.escape(ep)
			if err != nil {
				return token{}, err
			}
			b.WriteRune(r)
		case escaped:
			b.WriteRune(r)
		}
	}
}

// escape decodes the escape whose backslash is at ep.
func (l *lexer) escape(ep Pos) (rune, error) {
	if l.off >= len(l.src) {
		return 0, errorAt(ep, "unterminated string")
	}
	switch r := l.advance(); r {
	case '\'', '"', '\\':
		return r, nil
	case 'n':
		return '\n', nil
	case 't':
		return '\t', nil
	case 'u':
		r1, err := l.hex4(ep)
		if err != nil {
			return 0, err
		}
		switch {
		case r1 == 0:
			return 0, errorAt(ep, "invalid \\u escape: \\u0000 (NUL) is not allowed in a string")
		case 0xDC00 <= r1 && r1 <= 0xDFFF:
			return 0, errorAt(ep, "invalid \\u escape: lone low surrogate")
		case 0xD800 <= r1 && r1 <= 0xDBFF:
			lp := l.pos()
			if l.peekByte(0) != '\\' || l.peekByte(1) != 'u' {
				return 0, errorAt(ep, "invalid \\u escape: high surrogate without a low one")
			}
			l.advance()
			l.advance()
			r2, err := l.hex4(lp)
			if err != nil {
				return 0, err
			}
			if r2 < 0xDC00 || r2 > 0xDFFF {
				return 0, errorAt(ep, "invalid \\u escape: high surrogate without a low one")
			}
			return 0x10000 + (r1-0xD800)<<10 + (r2 - 0xDC00), nil
		}
		return r1, nil
	default:
		return 0, errorAt(ep, "unknown escape \\%c in string (use \\' \\\" \\\\ \\n \\t or \\uXXXX)", r)
	}
}

// hex4 reads the four hex digits of a \u escape.
func (l *lexer) hex4(ep Pos) (rune, error) {
	var r rune
	for range 4 {
		c := l.peekByte(0)
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, errorAt(ep, "invalid \\u escape: expected four hex digits")
		}
		l.advance()
		r = r<<4 | rune(d)
	}
	return r, nil
}
