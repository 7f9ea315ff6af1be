package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/corehq/core/store"
)

// The record encoding. It lives in this one file so that it can be swapped.
//
// A record value is:
//
//	version   byte (codecVersion)
//	created   time
//	updated   time
//	trashed   byte 0 or 1, then a time when 1
//	createdBy string
//	impl      string
//	fields    uvarint count, then count × (name string, value)
//
// where time is a zig-zag varint of Unix seconds then a uvarint of
// nanoseconds, string is a uvarint length then the bytes, and value is a tag
// byte followed by its payload:
//
//	tagNil, tagFalse, tagTrue   no payload
//	tagInt                      zig-zag varint (int64)
//	tagFloat                    8 bytes, IEEE 754 bits, little-endian
//	tagString                   string
//	tagList                     uvarint count, then the values
//	tagObject                   uvarint count, then (name string, value) pairs
//
// Type and id are not stored: they are the record's bucket and key.
//
// JSON would do, but it does not round-trip the value types of
// store.Record: a float64 3.0 would come back as an integer, an int64 beyond
// 2^53 would lose digits. This encoding keeps int64 and float64 apart, is
// about half the size and decodes without reflection.
const codecVersion = 1

const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagList
	tagObject
)

// maxDepth bounds the nesting of lists and objects in a value, so that
// neither encoding nor decoding can recurse without bound. It is the bound
// store.NormalizeValue keeps every written value within.
const maxDepth = store.MaxDepth

var errCorrupt = errors.New("bolt: corrupt record encoding")

// encodeRecord appends the encoding of r to buf. r's field values must be
// normalized (see store.NormalizeValue).
func encodeRecord(buf []byte, r *store.Record) []byte {
	buf = append(buf, codecVersion)
	buf = appendTime(buf, r.Created)
	buf = appendTime(buf, r.Updated)
	if r.Trashed != nil {
		buf = append(buf, 1)
		buf = appendTime(buf, *r.Trashed)
	} else {
		buf = append(buf, 0)
	}
	buf = appendString(buf, r.CreatedBy)
	buf = appendString(buf, r.Impl)
	buf = binary.AppendUvarint(buf, uint64(len(r.Fields)))
	for k, v := range r.Fields {
		buf = appendString(buf, k)
		buf = appendValue(buf, v)
	}
	return buf
}

// recordSize bounds the length of r's encoding (for values of the kinds
// appendValue encodes), so that a buffer of it takes the encoding without
// growing.
func recordSize(r *store.Record) int {
	n := 1 + 3*maxTime + 1 + 2*binary.MaxVarintLen64 + len(r.CreatedBy) + len(r.Impl) + binary.MaxVarintLen64
	for k, v := range r.Fields {
		n += binary.MaxVarintLen64 + len(k) + valueSize(v)
	}
	return n
}

// maxTime bounds the length of appendTime's encoding.
const maxTime = 2 * binary.MaxVarintLen64

// valueSize bounds the length of appendValue's encoding of v.
func valueSize(v any) int {
	switch v := v.(type) {
	case string:
		return 1 + binary.MaxVarintLen64 + len(v)
	case []any:
		n := 1 + binary.MaxVarintLen64
		for _, e := range v {
			n += valueSize(e)
		}
		return n
	case map[string]any:
		n := 1 + binary.MaxVarintLen64
		for k, e := range v {
			n += binary.MaxVarintLen64 + len(k) + valueSize(e)
		}
		return n
	}
	return 1 + binary.MaxVarintLen64 // nil, bool, int64, float64 (8 bytes)
}

func appendTime(buf []byte, t time.Time) []byte {
	buf = binary.AppendVarint(buf, t.Unix())
	return binary.AppendUvarint(buf, uint64(t.Nanosecond()))
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// appendValue encodes a normalized value. Anything else is a programming
// error caught by store.NormalizeValue before a write; it encodes as nil.
func appendValue(buf []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(buf, tagNil)
	case bool:
		if v {
			return append(buf, tagTrue)
		}
		return append(buf, tagFalse)
	case int64:
		return binary.AppendVarint(append(buf, tagInt), v)
	case float64:
		return binary.LittleEndian.AppendUint64(append(buf, tagFloat), math.Float64bits(v))
	case string:
		return appendString(append(buf, tagString), v)
	case []any:
		buf = binary.AppendUvarint(append(buf, tagList), uint64(len(v)))
		for _, e := range v {
			buf = appendValue(buf, e)
		}
		return buf
	case map[string]any:
		buf = binary.AppendUvarint(append(buf, tagObject), uint64(len(v)))
		for k, e := range v {
			buf = appendString(buf, k)
			buf = appendValue(buf, e)
		}
		return buf
	}
	return append(buf, tagNil)
}

// decoder reads an encoding; the first error sticks.
type decoder struct {
	b     []byte
	err   error
	names names
}

// names interns field names while a query decodes many records of one
// type, so that each name is allocated once rather than once per record.
type names map[string]string

func (n names) intern(b []byte) string {
	if s, ok := n[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if len(n) < 1024 {
		n[s] = s
	}
	return s
}

// decodeRecord decodes a record stored under id in the bucket of typ. It
// copies everything it keeps: b may be bbolt memory, valid only during its
// transaction.
func decodeRecord(typ, id string, b []byte) (*store.Record, error) {
	return decodeRecordNames(typ, id, b, nil)
}

// decodeRecordNames is decodeRecord with field names interned in nm (nil:
// not interned).
func decodeRecordNames(typ, id string, b []byte, nm names) (*store.Record, error) {
	return decodeFields(typ, id, b, nm, nil)
}

// decodeFields is decodeRecordNames that keeps only the fields named in
// only (all of them when only is nil), skipping the others' values without
// decoding them and stopping after the last of them. The trash mark is
// always decoded; the times, the creator and the implementing type only
// when only is nil or names them ("core.created", "core.updated",
// "core.createdBy", "core.impl").
func decodeFields(typ, id string, b []byte, nm names, only []string) (*store.Record, error) {
	r := &store.Record{Type: typ, ID: id}
	if err := decodeInto(r, b, nm, only); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeInto is decodeFields into r, whose Type and ID are set; r's
// Fields map is reused (cleared) when it has one, so that a record tested
// and dropped can be decoded into again without allocating.
func decodeInto(r *store.Record, b []byte, nm names, only []string) error {
	d := decoder{b: b, names: nm}
	if v := d.byte(); v != codecVersion && d.err == nil {
		return fmt.Errorf("bolt: record %s/%s: unknown encoding version %d", r.Type, r.ID, v)
	}
	r.Created = d.metaTime(only, "core.created")
	r.Updated = d.metaTime(only, "core.updated")
	r.Trashed = nil
	if d.byte() == 1 {
		t := d.time()
		r.Trashed = &t
	}
	r.CreatedBy = d.meta(only, "core.createdBy")
	r.Impl = d.meta(only, "core.impl")
	n := d.count()
	switch {
	case r.Fields != nil:
		clear(r.Fields)
	case only != nil:
		r.Fields = make(map[string]any, min(n, len(only)))
	default:
		r.Fields = make(map[string]any, n)
	}
	// A probe stops at the last field it wants; what follows is checked
	// when the record is decoded in full.
	left := wanted(only)
	for i := 0; i < n && d.err == nil && left != 0; i++ {
		if only == nil {
			k := d.name()
			r.Fields[k] = d.value(0)
		} else if name, ok := lookup(only, d.rawString()); ok {
			r.Fields[name] = d.value(0)
			left--
		} else {
			d.skip(0)
		}
	}
	if d.err == nil && left != 0 && len(d.b) != 0 {
		d.err = errCorrupt
	}
	if d.err != nil {
		return fmt.Errorf("bolt: record %s/%s: %w", r.Type, r.ID, d.err)
	}
	return nil
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length and checks it against the bytes left (every element
// takes at least one byte), so that a corrupt count cannot allocate much.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.count()
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// name reads a field name, interned when the decoder has names.
func (d *decoder) name() string {
	if d.names == nil {
		return d.string()
	}
	n := d.count()
	s := d.names.intern(d.b[:n])
	d.b = d.b[n:]
	return s
}

// wanted is how many record fields only names (-1 for all of them).
func wanted(only []string) int {
	if only == nil {
		return -1
	}
	n := 0
	for _, name := range only {
		if !strings.HasPrefix(name, "core.") {
			n++
		}
	}
	return n
}

// metaTime reads a metadata time, decoded when only is nil or holds name.
func (d *decoder) metaTime(only []string, name string) time.Time {
	if only == nil || slices.Contains(only, name) {
		return d.time()
	}
	d.skipVarint()
	d.skipVarint()
	return time.Time{}
}

// skipVarint passes over a varint (signed or not) without decoding it.
func (d *decoder) skipVarint() {
	for i := 0; i < len(d.b) && i < binary.MaxVarintLen64; i++ {
		if d.b[i] < 0x80 {
			d.b = d.b[i+1:]
			return
		}
	}
	d.fail()
}

// meta reads a metadata string, kept when only is nil or holds name.
func (d *decoder) meta(only []string, name string) string {
	if only == nil || slices.Contains(only, name) {
		return d.string()
	}
	d.rawString()
	return ""
}

// rawString reads a string without copying it: the bytes are d's input.
func (d *decoder) rawString() []byte {
	n := d.count()
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

// lookup returns the name in names equal to b, without allocating.
func lookup(names []string, b []byte) (string, bool) {
	for _, n := range names {
		if n == string(b) {
			return n, true
		}
	}
	return "", false
}

// skip passes over one value without decoding it.
func (d *decoder) skip(depth int) {
	if depth > maxDepth {
		d.fail()
		return
	}
	switch d.byte() {
	case tagNil, tagFalse, tagTrue:
	case tagInt:
		d.varint()
	case tagFloat:
		if len(d.b) < 8 {
			d.fail()
			return
		}
		d.b = d.b[8:]
	case tagString:
		d.rawString()
	case tagList:
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			d.skip(depth + 1)
		}
	case tagObject:
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			d.rawString()
			d.skip(depth + 1)
		}
	default:
		d.fail()
	}
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

func (d *decoder) value(depth int) any {
	if depth > maxDepth {
		d.fail()
		return nil
	}
	switch d.byte() {
	case tagNil:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		return d.varint()
	case tagFloat:
		if len(d.b) < 8 {
			d.fail()
			return nil
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return f
	case tagString:
		return d.string()
	case tagList:
		n := d.count()
		l := make([]any, n)
		for i := range l {
			l[i] = d.value(depth + 1)
		}
		return l
	case tagObject:
		n := d.count()
		m := make(map[string]any, n)
		for i := 0; i < n && d.err == nil; i++ {
			k := d.name()
			m[k] = d.value(depth + 1)
		}
		return m
	}
	d.fail()
	return nil
}

// cloneValue deep-copies a normalized value, so that a record handed to a
// caller shares nothing with one the store keeps using.
func cloneValue(v any) any { return store.MapValue(v, nil) }
