package bolt

import (
	"math"
	"slices"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// An aggregation whose every field — those it aggregates, groups by and
// filters on — is a field of one index is computed from that index's
// entries alone, without reading a record: each entry's values become a
// probe record that the filter is matched against and the accumulator
// takes. It is exact only when the entries say all a record would:
//
//   - the index is not multikey (one entry per record, a record without
//     the field has the entry null) and its fields are top-level fields;
//   - every such field has held only numbers or only booleans (nulls
//     aside): strings (DateTime values among them) are cut in keys
//     (maxKeyString) and objects are not in them at all;
//   - no record of the type is trashed, or the query includes trashed
//     ones: the trash mark is not in the entries (trashedCount).
//
// Numbers are float64 in keys; the fields the query names in Ints (Int
// fields) are given back as int64, as the records hold them, so sums keep
// their kind. The filter's conjuncts on the index still bound the entries
// read (a range on its first field, or equality on leading fields).

// coveringIndex returns the index and its bucket that can answer q with
// filter alone, or nil.
func (e *exec) coveringIndex(q *store.AggQuery, filter arcql.Expr) (*indexDef, *bbolt.Bucket) {
	if e.ts == nil {
		return nil, nil
	}
	if !q.IncludeTrashed {
		if n, ok := trashedCount(e.ib, q.Type); !ok || n > 0 {
			return nil, nil
		}
	}
	need := slices.Clone(q.ReadFields())
	arcql.Fields(filter, nil, func(name string) {
		if !slices.Contains(need, name) {
			need = append(need, name)
		}
	})
	for _, x := range e.ts.Indexes {
		if !coversAll(x, need) {
			continue
		}
		b := idxBucket(e.ib, q.Type, x.Name)
		if b == nil {
			continue
		}
		fl := readFlags(b, len(x.Fields))
		if fl.multikey {
			continue
		}
		exact := true
		for i := range x.Fields {
			switch fl.kinds[i] {
			case 0, bitNumber, bitBool:
			default:
				exact = false
			}
		}
		if exact {
			return x, b
		}
	}
	return nil, nil
}

// coversAll reports whether every name is a top-level field of x.
func coversAll(x *indexDef, names []string) bool {
	for _, n := range names {
		if strings.Contains(n, ".") || !slices.Contains(x.Fields, n) {
			return false
		}
	}
	return true
}

// aggregateIndex feeds acc from the entries of x (bucket b) that the
// filter's conjuncts on x select, each matched against the whole filter.
func (e *exec) aggregateIndex(q *store.AggQuery, x *indexDef, b *bbolt.Bucket, acc *store.Accumulator) error {
	// Every entry (after the flags under metaKey), unless a conjunct on x
	// narrows them.
	cd, rank := &candidate{index: x, bucket: b, rng: &keyRange{lo: []byte{kNull}}}, -1
	for _, c := range e.candidates(splitConjuncts(e.filter)) {
		if c.index == x && c.rank > rank {
			cd, rank = c, c.rank
		}
	}
	ints := make([]bool, len(x.Fields))
	for i, f := range x.Fields {
		ints[i] = slices.Contains(q.Ints, f)
	}
	probe := &store.Record{Type: q.Type, Fields: make(map[string]any, len(x.Fields))}
	var err error
	walkErr := e.entries(cd, func(k []byte) bool {
		clear(probe.Fields)
		rest := k
		for i, f := range x.Fields {
			var v any
			var ok bool
			if v, rest, ok = keyValue(rest, ints[i]); !ok {
				err = errCorruptKey(q.Type, x)
				return false
			}
			if v != nil {
				probe.Fields[f] = v
			}
		}
		if !arcql.Match(e.filter, probe) {
			return true
		}
		err = acc.Add(probe)
		return err == nil
	})
	if walkErr != nil {
		return walkErr
	}
	return err
}

// keyValue decodes the first value of an index key: null, a boolean or a
// number (int64 when asInt and whole). Other kinds are not decoded
// (coveringIndex keeps them out).
func keyValue(b []byte, asInt bool) (any, []byte, bool) {
	if len(b) == 0 {
		return nil, nil, false
	}
	switch b[0] {
	case kNull:
		return nil, b[1:], true
	case kFalse:
		return false, b[1:], true
	case kTrue:
		return true, b[1:], true
	case kNumber:
		f, ok := keyNumber(b)
		if !ok {
			return nil, nil, false
		}
		if asInt && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return int64(f), b[9:], true
		}
		return f, b[9:], true
	}
	return nil, nil, false
}
