package bolt

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Index entry keys are order-preserving: comparing two keys byte by byte
// gives the order arcql.CompareValues gives their values, then the order of
// the record ids. A key is the encoding of the record's value of each field
// of the index, then the record id:
//
//	key   = value(field1) … value(fieldN) escaped(id)
//	value = one tag byte, then its payload:
//	  kNull    missing, null or an empty list
//	  kFalse, kTrue
//	  kNumber  8 bytes: the float64 bits, sign bit flipped for positive
//	           numbers and all bits flipped for negative ones, big-endian
//	           (-0 is written as 0, NaN below -Inf)
//	  kString  escaped(string), or for a string longer than maxKeyString
//	           its first maxKeyString bytes escaped and ended by 0x00 0x02
//	           (truncated: such keys only narrow the candidates)
//	  kTime    8 bytes of Unix seconds with the sign bit flipped, then 4
//	           bytes of nanoseconds, big-endian
//	  kOther   an object or a value of no known type: nothing follows, so
//	           they all fall together (never matched through an index)
//	escaped(s) = s with every 0x00 written 0x00 0xFF, then 0x00 0x01
//
// The tags follow the ranks of arcql.CompareValues (null < booleans <
// numbers < strings < timestamps), so an index on a field whose values are
// scalars is in sort order even when kinds are mixed. Integers are written
// as float64: beyond 2^53 distinct integers may share a key, which index
// scans allow for (they are inclusive and every candidate is re-checked).
//
// Entry values are empty. The one key starting with 0x00 (metaKey) holds
// the index's flags and is skipped by scans.
const (
	kNull   byte = 0x01
	kFalse  byte = 0x02
	kTrue   byte = 0x03
	kNumber byte = 0x04
	kString byte = 0x05
	kTime   byte = 0x06
	kOther  byte = 0x07
)

// maxKeyString is the longest string an index key holds whole; bbolt keys
// are at most 32 KiB. Longer strings keep their first maxKeyString bytes,
// which still orders them correctly against every other value and groups
// the ones sharing that prefix: equality, ranges and sorting then re-check
// the whole values (Match and CompareSort), and unique indexes compare the
// records' values (see checkFree).
const maxKeyString = 1024

// metaKey is the key of an index bucket's flags (see indexFlags).
var metaKey = []byte{0x00}

// Kind bits recorded in an index's flags, per field, for every non-null
// value the index has ever held. They decide which scans are exact enough
// to use (see the planner).
const (
	bitBool byte = 1 << iota
	bitNumber
	bitString
	bitTime
	bitOther
)

// kindBit is the kind bit of an encoded value's tag (0 for null).
func kindBit(tag byte) byte {
	switch tag {
	case kFalse, kTrue:
		return bitBool
	case kNumber:
		return bitNumber
	case kString:
		return bitString
	case kTime:
		return bitTime
	case kOther:
		return bitOther
	}
	return 0
}

// appendKeyValue appends the key encoding of one scalar value.
func appendKeyValue(buf []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(buf, kNull)
	case bool:
		if v {
			return append(buf, kTrue)
		}
		return append(buf, kFalse)
	case int64:
		return appendKeyNumber(buf, float64(v))
	case float64:
		return appendKeyNumber(buf, v)
	case int:
		return appendKeyNumber(buf, float64(v))
	case string:
		if len(v) > maxKeyString {
			buf = appendEscapedPrefix(append(buf, kString), v[:maxKeyString])
			return append(buf, 0x00, 0x02)
		}
		return appendEscaped(append(buf, kString), v)
	case time.Time:
		buf = append(buf, kTime)
		buf = binary.BigEndian.AppendUint64(buf, uint64(v.Unix())^(1<<63))
		return binary.BigEndian.AppendUint32(buf, uint32(v.Nanosecond()))
	}
	return append(buf, kOther)
}

func appendKeyNumber(buf []byte, f float64) []byte {
	buf = append(buf, kNumber)
	var u uint64
	switch {
	case math.IsNaN(f):
		u = 0
	case f == 0:
		u = 1 << 63 // both zeros
	default:
		u = math.Float64bits(f)
		if u&(1<<63) != 0 {
			u = ^u
		} else {
			u |= 1 << 63
		}
	}
	return binary.BigEndian.AppendUint64(buf, u)
}

// keyNumber decodes the number appendKeyNumber encoded at the start of b
// (its kNumber tag included).
func keyNumber(b []byte) (float64, bool) {
	if len(b) < 9 || b[0] != kNumber {
		return 0, false
	}
	u := binary.BigEndian.Uint64(b[1:9])
	if u&(1<<63) != 0 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	return math.Float64frombits(u), true
}

// appendEscaped appends s escaped and terminated.
func appendEscaped(buf []byte, s string) []byte {
	buf = appendEscapedPrefix(buf, s)
	return append(buf, 0x00, 0x01)
}

// appendEscapedPrefix appends s escaped but not terminated: every string
// starting with s has an encoding starting with this.
func appendEscapedPrefix(buf []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			return append(buf, s...)
		}
		buf = append(buf, s[:i]...)
		buf = append(buf, 0x00, 0xFF)
		s = s[i+1:]
	}
}

// appendLiteral appends the key encoding of a filter literal.
func appendLiteral(buf []byte, v *arcql.Value) []byte {
	switch v.Kind {
	case arcql.KindString:
		return appendKeyValue(buf, v.Str)
	case arcql.KindNumber:
		return appendKeyNumber(buf, v.Num)
	case arcql.KindBool:
		return appendKeyValue(buf, v.Bool)
	case arcql.KindTime:
		return appendKeyValue(buf, v.Time)
	}
	return append(buf, kNull)
}

// literalBit is the kind bit of the values a literal can equal or order
// against; 0 for null.
func literalBit(v *arcql.Value) byte {
	switch v.Kind {
	case arcql.KindString:
		return bitString
	case arcql.KindNumber:
		return bitNumber
	case arcql.KindBool:
		return bitBool
	case arcql.KindTime:
		return bitTime
	}
	return 0
}

// skipKeyValue returns b after its first encoded value.
func skipKeyValue(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	switch b[0] {
	case kNull, kFalse, kTrue, kOther:
		return b[1:], true
	case kNumber:
		if len(b) < 9 {
			return nil, false
		}
		return b[9:], true
	case kTime:
		if len(b) < 13 {
			return nil, false
		}
		return b[13:], true
	case kString:
		_, rest, ok := unescape(b[1:], false)
		return rest, ok
	}
	return nil, false
}

// truncated reports whether an encoded value is a truncated string.
func truncated(val []byte) bool {
	return len(val) >= 3 && val[0] == kString && val[len(val)-2] == 0x00 && val[len(val)-1] == 0x02
}

// unescape reads an escaped, terminated string from b (either terminator).
// With keep false it only finds the end.
func unescape(b []byte, keep bool) (string, []byte, bool) {
	var out []byte
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], 0x00)
		if j < 0 || i+j+1 >= len(b) {
			return "", nil, false
		}
		j += i
		if keep {
			out = append(out, b[i:j]...)
		}
		switch b[j+1] {
		case 0x01, 0x02:
			return string(out), b[j+2:], true
		case 0xFF:
			if keep {
				out = append(out, 0x00)
			}
			i = j + 2
		default:
			return "", nil, false
		}
	}
}

// entryID returns the record id at the end of an index key of n fields.
// The result may share memory with key (valid only while key is).
func entryID(key []byte, n int) ([]byte, bool) {
	b := key
	for range n {
		var ok bool
		if b, ok = skipKeyValue(b); !ok {
			return nil, false
		}
	}
	// The common case, an id without 0x00: no copy.
	if i := bytes.IndexByte(b, 0x00); i == len(b)-2 && b[i+1] == 0x01 {
		return b[:i:i], true
	}
	id, rest, ok := unescape(b, true)
	return []byte(id), ok && len(rest) == 0
}

// valuePart returns the value part of an index key of n fields: the key
// without its id.
func valuePart(key []byte, n int) ([]byte, bool) {
	b := key
	for range n {
		var ok bool
		if b, ok = skipKeyValue(b); !ok {
			return nil, false
		}
	}
	return key[:len(key)-len(b)], true
}

// prefixEnd is the smallest key greater than every key starting with p, or
// nil when there is none (p is all 0xFF).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// fieldLeaves returns the key encodings of the values a record has at an
// index field (see fieldValues), without duplicates; a record with no value
// there has the one value null. list reports whether a list was crossed
// (the index becomes multikey).
func fieldLeaves(r *store.Record, field string) (out [][]byte, list bool) {
	vals, list := fieldValues(r, field)
	for _, v := range vals {
		k := appendKeyValue(nil, v)
		if !slices.ContainsFunc(out, func(have []byte) bool { return bytes.Equal(have, k) }) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		out = append(out, []byte{kNull})
	}
	return out, list
}

// fieldValues returns the values a record has at an index field, as arcql
// sees them: "core.x" names metadata, dotted names descend into objects,
// and lists are crossed at every level so that each element is a value of
// its own. list reports whether a list was crossed.
func fieldValues(r *store.Record, field string) (vals []any, list bool) {
	var x any
	var ok bool
	var rest []string
	if strings.HasPrefix(field, "core.") {
		x, ok = r.Value(field)
	} else if strings.IndexByte(field, '.') >= 0 {
		parts := strings.Split(field, ".")
		x, ok = r.Value(parts[0])
		rest = parts[1:]
	} else {
		x, ok = r.Value(field)
	}
	if !ok {
		return nil, false
	}
	return collectLeaves(x, rest, nil, false, 0)
}

func collectLeaves(x any, rest []string, out []any, list bool, depth int) ([]any, bool) {
	if depth > maxDepth {
		return out, list
	}
	if l, ok := x.([]any); ok {
		for _, e := range l {
			out, _ = collectLeaves(e, rest, out, true, depth+1)
		}
		return out, true
	}
	if len(rest) > 0 {
		m, ok := x.(map[string]any)
		if !ok {
			return out, list
		}
		child, ok := m[rest[0]]
		if !ok {
			return out, list
		}
		return collectLeaves(child, rest[1:], out, list, depth+1)
	}
	return append(out, x), list
}
