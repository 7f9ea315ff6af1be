package jsonvalue

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/corehq/core/internal/whole"
)

// Decode decodes b, which must hold exactly one JSON value, into
// map[string]any, []any, float64 (int64 for a whole number only int64
// holds exactly), string, bool or nil. Objects and arrays
// may nest at most maxDepth deep (with maxDepth 1, [1] is accepted and
// [[1]] refused). See the package documentation for what it refuses.
func Decode(b []byte, maxDepth int) (any, error) {
	d, ok := decoders.Get().(*decoder)
	if !ok {
		d = new(decoder)
	}
	d.b, d.i, d.maxDepth = b, 0, maxDepth
	v, err := d.document()
	d.release()
	return v, err
}

// decoders holds decoders between calls, for their scratch space and
// their cache of keys.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

const (
	// keyCacheSize is how many recently seen object keys a decoder keeps
	// (a power of two): request bodies repeat a few keys per record.
	keyCacheSize = 64
	// maxCachedKey is the longest key the cache takes, in bytes.
	maxCachedKey = 32
	// maxPooledScratch bounds the scratch a pooled decoder keeps, so that
	// one huge body does not pin its memory.
	maxPooledScratch = 64 << 10
)

type decoder struct {
	b        []byte
	i        int // the offset of the next byte to read
	maxDepth int

	// buf collects a string that differs from its bytes in the input
	// (escapes, invalid UTF-8).
	buf []byte
	// vals collects the elements of the arrays being decoded, innermost
	// last, so that each array is allocated once at its full length.
	vals []any
	// keys caches recently decoded keys by a hash of their bytes; a key
	// is reused only when its bytes are equal.
	keys [keyCacheSize]string
}

func (d *decoder) release() {
	d.b = nil
	if cap(d.buf) > maxPooledScratch {
		d.buf = nil
	}
	if cap(d.vals) > maxPooledScratch/16 {
		d.vals = nil
	}
	clear(d.vals) // an error leaves the elements of unfinished arrays
	d.vals = d.vals[:0]
	decoders.Put(d)
}

// document decodes the whole input: one value between optional spaces.
func (d *decoder) document() (any, error) {
	d.skipSpace()
	if d.i == len(d.b) {
		if len(d.b) == 0 {
			return nil, errors.New("no JSON value: the input is empty")
		}
		return nil, errors.New("no JSON value: the input is only whitespace")
	}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.i < len(d.b) {
		return nil, fmt.Errorf("more data after the JSON value at byte %d", d.i)
	}
	return v, nil
}

func (d *decoder) skipSpace() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value decodes the value at d.i (not a space) inside depth containers.
func (d *decoder) value(depth int) (any, error) {
	if d.i >= len(d.b) {
		return nil, d.eof()
	}
	switch c := d.b[d.i]; c {
	case '{':
		return d.object(depth)
	case '[':
		return d.array(depth)
	case '"':
		return d.string()
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return d.number()
		}
		return nil, d.invalid("looking for beginning of value")
	}
}

func (d *decoder) object(depth int) (any, error) {
	if depth >= d.maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels at byte %d", d.maxDepth, d.i)
	}
	d.i++ // {
	m := map[string]any{}
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, d.invalid("looking for beginning of object key string")
		}
		at := d.i
		k, err := d.key()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("duplicate key %s at byte %d", quoteShort(k), at)
		}
		d.skipSpace()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, d.invalid("after object key")
		}
		d.i++
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		done, err := d.next('}', "after object key:value pair")
		if err != nil {
			return nil, err
		}
		if done {
			return m, nil
		}
	}
}

func (d *decoder) array(depth int) (any, error) {
	if depth >= d.maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels at byte %d", d.maxDepth, d.i)
	}
	d.i++ // [
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return []any{}, nil
	}
	base := len(d.vals)
	for {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		d.vals = append(d.vals, v)
		done, err := d.next(']', "after array element")
		if err != nil {
			return nil, err
		}
		if done {
			l := make([]any, len(d.vals)-base)
			copy(l, d.vals[base:])
			clear(d.vals[base:])
			d.vals = d.vals[:base]
			return l, nil
		}
	}
}

// next reads what follows a member of an object or an array: a comma
// (and the space after it), or closer, which ends it (done); anything
// else is invalid, what saying where.
func (d *decoder) next(closer byte, what string) (done bool, err error) {
	d.skipSpace()
	if d.i >= len(d.b) {
		return false, d.eof()
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		d.skipSpace()
		return false, nil
	case closer:
		d.i++
		return true, nil
	}
	return false, d.invalid(what)
}

// literal reads true, false or null, whose first byte is at d.i.
func (d *decoder) literal(lit string) error {
	for j := 1; j < len(lit); j++ {
		k := d.i + j
		if k >= len(d.b) {
			return d.eof()
		}
		if d.b[k] != lit[j] {
			d.i = k
			return d.invalid(fmt.Sprintf("in literal %s (expecting %s)", lit, quoteChar([]byte{lit[j]})))
		}
	}
	d.i += len(lit)
	return nil
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// smallInts are 0 to 255 as boxed float64s: converting a float64 to an
// interface allocates, and small whole numbers (ids, counts, quantities)
// are common in requests.
var smallInts = func() (a [256]any) {
	for i := range a {
		a[i] = float64(i)
	}
	return a
}()

func (d *decoder) number() (any, error) {
	b, start := d.b, d.i
	i := start
	neg := b[i] == '-'
	if neg {
		i++
	}
	// mant accumulates the digits while there are at most 15 of them,
	// which a float64 holds exactly.
	var mant uint64
	digits, frac := 0, 0
	switch {
	case i >= len(b):
		d.i = i
		return nil, d.eof()
	case b[i] == '0':
		i++
		digits++
	case '1' <= b[i] && b[i] <= '9':
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			mant = mant*10 + uint64(b[i]-'0')
			digits++
		}
	default:
		d.i = i
		return nil, d.invalid("in numeric literal")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			d.i = i
			return nil, d.invalid("after decimal point in numeric literal")
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			mant = mant*10 + uint64(b[i]-'0')
			digits++
			frac++
		}
	}
	exp := false
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		exp = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			d.i = i
			return nil, d.invalid("in exponent of numeric literal")
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	d.i = i
	if !exp && digits <= 15 {
		// Both operands exact, so the one division rounds correctly:
		// the same float64 as strconv.ParseFloat.
		if frac == 0 && !neg && mant < uint64(len(smallInts)) {
			return smallInts[mant], nil
		}
		f := float64(mant) / pow10[frac]
		if neg {
			f = -f
		}
		return f, nil
	}
	f, err := strconv.ParseFloat(string(b[start:i]), 64)
	if err != nil { // only ErrRange: the syntax is checked above
		return nil, fmt.Errorf("number %s at byte %d is out of the range of a float64", shorten(string(b[start:i])), start)
	}
	if !exp && frac == 0 && digits <= 19 {
		if n, ok := whole.BeyondFloat(string(b[start:i])); ok {
			return n, nil
		}
	}
	return f, nil
}

// key decodes an object key, reusing the string of an equal key decoded
// recently.
func (d *decoder) key() (string, error) {
	raw, escaped, err := d.scanString()
	if err != nil {
		return "", err
	}
	if escaped || len(raw) > maxCachedKey {
		return string(raw), nil
	}
	h := uint32(2166136261) // FNV-1a
	for _, c := range raw {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &d.keys[h&(keyCacheSize-1)]
	if *slot != string(raw) {
		*slot = string(raw)
	}
	return *slot, nil
}

func (d *decoder) string() (any, error) {
	raw, _, err := d.scanString()
	if err != nil {
		return nil, err
	}
	return string(raw), nil
}

// scanString reads the string literal at d.i and returns its contents:
// a slice of the input when it needs no change, else (escaped) d.buf
// holding the unescaped, UTF-8-coerced text. Either is valid only until
// the next call.
func (d *decoder) scanString() (raw []byte, escaped bool, err error) {
	b := d.b
	start := d.i + 1
	i := start
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			d.i = i + 1
			return b[start:i], false, nil
		case c == '\\' || c < ' ':
			return d.unescape(start, i)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return d.unescape(start, i)
			}
			i += size
		}
	}
	d.i = i
	return nil, false, d.eof()
}

// unescape continues scanString at i, the first byte the string's value
// does not share with the input, writing the value to d.buf. It coerces
// to UTF-8 as encoding/json does: each byte of an invalid sequence, and
// each lone surrogate escape, becomes U+FFFD.
func (d *decoder) unescape(start, i int) ([]byte, bool, error) {
	b := d.b
	buf := append(d.buf[:0], b[start:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			d.i = i + 1
			d.buf = buf // keep what it grew to
			return buf, true, nil
		case c < ' ':
			d.i = i
			return nil, false, d.invalid("in string literal")
		case c == '\\':
			i++
			if i >= len(b) {
				d.i = i
				return nil, false, d.eof()
			}
			switch e := b[i]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := d.hex4(i + 1)
				if err != nil {
					return nil, false, err
				}
				i += 4
				if utf16.IsSurrogate(r) {
					// Only a \u escape right after it can complete the pair.
					if i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
						if r2, err := d.hex4(i + 3); err == nil {
							if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
								buf = utf8.AppendRune(buf, p)
								i += 7
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
			default:
				d.i = i
				return nil, false, d.invalid("in string escape code")
			}
			i++
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			buf = utf8.AppendRune(buf, r) // U+FFFD for an invalid byte
			i += size
		}
	}
	d.i = i
	return nil, false, d.eof()
}

// hex4 reads the four hexadecimal digits of a \u escape at i.
func (d *decoder) hex4(i int) (rune, error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(d.b) {
			d.i = j
			return 0, d.eof()
		}
		c := d.b[j]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			d.i = j
			return 0, d.invalid(`in \u hexadecimal character escape`)
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

func (d *decoder) eof() error {
	return fmt.Errorf("unexpected end of JSON at byte %d", len(d.b))
}

// invalid reports the byte at d.i as out of place; what says where.
func (d *decoder) invalid(what string) error {
	if d.i >= len(d.b) {
		return d.eof()
	}
	return fmt.Errorf("malformed JSON at byte %d: invalid character %s %s", d.i, quoteChar(d.b[d.i:]), what)
}

// quoteChar quotes the character b starts with as a Go rune literal, the
// way encoding/json's messages do ('x', '\n'), or as '\xff' when b does not
// start with valid UTF-8.
func quoteChar(b []byte) string {
	r, size := utf8.DecodeRune(b)
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf(`'\x%02x'`, b[0])
	}
	return strconv.QuoteRune(r)
}

// maxQuoted is the most bytes of a client's text a message repeats.
const maxQuoted = 40

// shorten cuts s to at most maxQuoted bytes, on a rune boundary, marking
// the cut with an ellipsis.
func shorten(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// quoteShort quotes a shortened key the way Go quotes strings.
func quoteShort(s string) string {
	return strconv.Quote(shorten(s))
}
