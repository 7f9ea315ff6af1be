package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// maxEntries bounds the index entries one record may have in one index:
// a compound index over list fields has one entry per combination of their
// elements.
const maxEntries = 10000

// indexFlags is what an index has seen, kept under metaKey in its bucket:
// byte 0 is 1 once some record had a list at an indexed field (the index is
// multikey: a record may have several entries), then one byte per field
// with the kind bits of every non-null value it has held. Flags only grow
// (until the index is rebuilt); the planner reads them to know which scans
// give exact orders and complete candidate sets.
type indexFlags struct {
	multikey bool
	kinds    []byte
}

func readFlags(b *bbolt.Bucket, n int) indexFlags { return flagsOf(b.Get(metaKey), n) }

// flagsOf decodes the flags stored as v of an index of n fields.
func flagsOf(v []byte, n int) indexFlags {
	f := indexFlags{kinds: make([]byte, n)}
	if len(v) == n+1 {
		f.multikey = v[0] == 1
		copy(f.kinds, v[1:])
	}
	return f
}

func (f indexFlags) bytes() []byte {
	out := make([]byte, 1, 1+len(f.kinds))
	if f.multikey {
		out[0] = 1
	}
	return append(out, f.kinds...)
}

// indexEntries returns the index keys of record r and the flags its
// values contribute; for a nil r, none and no flags (no kinds at all).
func indexEntries(x *indexDef, r *store.Record) ([][]byte, indexFlags, error) {
	if r == nil {
		return nil, indexFlags{}, nil
	}
	fl := indexFlags{kinds: make([]byte, len(x.Fields))}
	if k, ok := scalarEntry(x, r); ok {
		fl.kinds[0] = kindBit(k[0])
		return [][]byte{k}, fl, nil
	}
	return compoundEntries(x, r, fl)
}

// scalarEntry is the one index key of a record where the index has one
// field and the record holds no list there, the usual case, built in one
// buffer; ok is false where compoundEntries must work the keys out.
func scalarEntry(x *indexDef, r *store.Record) (key []byte, ok bool) {
	if len(x.Fields) != 1 {
		return nil, false
	}
	f := x.Fields[0]
	if !strings.HasPrefix(f, "core.") && strings.IndexByte(f, '.') >= 0 {
		return nil, false // a path into an object value
	}
	v, found := r.Value(f)
	if _, list := v.([]any); list {
		return nil, false
	}
	buf := make([]byte, 0, 16+len(r.ID))
	if found {
		buf = appendKeyValue(buf, v)
	} else {
		buf = append(buf, kNull)
	}
	return appendEscaped(buf, r.ID), true
}

// compoundEntries is indexEntries for any index and record: one key per
// combination of the values of the fields (a list field has several).
func compoundEntries(x *indexDef, r *store.Record, fl indexFlags) ([][]byte, indexFlags, error) {
	keys := [][]byte{nil}
	for i, f := range x.Fields {
		leaves, list := fieldLeaves(r, f)
		fl.multikey = fl.multikey || list
		for _, l := range leaves {
			fl.kinds[i] |= kindBit(l[0])
		}
		if len(keys)*len(leaves) > maxEntries {
			return nil, fl, fmt.Errorf("bolt: record %s/%s would have more than %d entries in index %s",
				r.Type, r.ID, maxEntries, x.Name)
		}
		next := make([][]byte, 0, len(keys)*len(leaves))
		for _, k := range keys {
			for _, l := range leaves {
				nk := make([]byte, 0, len(k)+len(l)+len(r.ID)+2)
				next = append(next, append(append(nk, k...), l...))
			}
		}
		keys = next
	}
	for i := range keys {
		keys[i] = appendEscaped(keys[i], r.ID)
	}
	return keys, fl, nil
}

// updateIndex moves the entries of one index from record old to record new
// (either may be nil), enforcing uniqueness and growing the flags. rb is
// the bucket of the type's records.
func updateIndex(b, rb *bbolt.Bucket, typ string, x *indexDef, old, new *store.Record) error {
	oldKeys, _, err := indexEntries(x, old)
	if err != nil {
		return err
	}
	newKeys, nfl, err := indexEntries(x, new)
	if err != nil {
		return err
	}
	removed, added := diffKeys(oldKeys, newKeys)
	for _, k := range removed {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	for _, k := range added {
		if x.Unique && k[0] != kNull {
			if err := checkFree(b, rb, typ, x, k, new); err != nil {
				return err
			}
		}
		if err := b.Put(k, nil); err != nil {
			return err
		}
	}
	if new == nil {
		return nil
	}
	stored := b.Get(metaKey)
	if covers(stored, nfl) {
		return nil // what almost every write finds: nothing new
	}
	fl := flagsOf(stored, len(x.Fields))
	changed := false
	if nfl.multikey && !fl.multikey {
		fl.multikey, changed = true, true
	}
	for i, k := range nfl.kinds {
		if fl.kinds[i]|k != fl.kinds[i] {
			fl.kinds[i] |= k
			changed = true
		}
	}
	if changed {
		return b.Put(metaKey, fl.bytes())
	}
	return nil
}

// covers reports whether flags stored as v hold every flag of f already.
func covers(v []byte, f indexFlags) bool {
	if len(v) != len(f.kinds)+1 || (f.multikey && v[0] != 1) {
		return false
	}
	for i, k := range f.kinds {
		if v[1+i]|k != v[1+i] {
			return false
		}
	}
	return true
}

// checkFree fails with ErrUnique when the value of key (a single-field
// unique index entry of record r) belongs to another record. When the key
// holds a truncated string, other records with the same key are read to
// compare the whole values.
func checkFree(b, rb *bbolt.Bucket, typ string, x *indexDef, key []byte, r *store.Record) error {
	val, ok := valuePart(key, 1)
	if !ok {
		return fmt.Errorf("bolt: index %s.%s: bad key", typ, x.Name)
	}
	c := b.Cursor()
	for k, _ := c.Seek(val); k != nil && bytes.HasPrefix(k, val); k, _ = c.Next() {
		other, ok := entryID(k, 1)
		if !ok || string(other) == r.ID {
			continue
		}
		if !truncated(val) {
			return &store.FieldError{Err: store.ErrUnique, Type: typ, Field: x.Fields[0], Value: keyValueOf(val)}
		}
		o, err := decodeRecord(typ, string(other), rb.Get(other))
		if err != nil {
			return err
		}
		if v, clash := sharedValue(r, o, x.Fields[0], val); clash {
			return &store.FieldError{Err: store.ErrUnique, Type: typ, Field: x.Fields[0], Value: v}
		}
	}
	return nil
}

// sharedValue finds a value of field, with key val, that both records hold.
func sharedValue(a, b *store.Record, field string, val []byte) (any, bool) {
	av, _ := fieldValues(a, field)
	bv, _ := fieldValues(b, field)
	for _, x := range av {
		if !bytes.Equal(appendKeyValue(nil, x), val) {
			continue
		}
		for _, y := range bv {
			if x == y {
				return x, true
			}
		}
	}
	return nil, false
}

// diffKeys returns the keys of a not in b and of b not in a.
func diffKeys(a, b [][]byte) (onlyA, onlyB [][]byte) {
	if len(a) == 0 || len(b) == 0 {
		return a, b // a create or a delete
	}
	if len(a) == 1 && len(b) == 1 {
		if bytes.Equal(a[0], b[0]) {
			return nil, nil
		}
		return a, b
	}
	inA := make(map[string]bool, len(a))
	for _, k := range a {
		inA[string(k)] = true
	}
	inB := make(map[string]bool, len(b))
	for _, k := range b {
		inB[string(k)] = true
		if !inA[string(k)] {
			onlyB = append(onlyB, k)
		}
	}
	for _, k := range a {
		if !inB[string(k)] {
			onlyA = append(onlyA, k)
		}
	}
	return onlyA, onlyB
}

// keyValueOf decodes the first value of an index key, for error messages.
func keyValueOf(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case kFalse:
		return false
	case kTrue:
		return true
	case kNumber:
		f, ok := keyNumber(b)
		if !ok {
			return nil
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f)
		}
		return f
	case kString:
		s, _, _ := unescape(b[1:], true)
		return s
	case kTime:
		if len(b) < 13 {
			return nil
		}
		sec := int64(binary.BigEndian.Uint64(b[1:9]) ^ (1 << 63))
		return time.Unix(sec, int64(binary.BigEndian.Uint32(b[9:13]))).UTC()
	}
	return nil
}
