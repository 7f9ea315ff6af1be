package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// indexDef is one secondary index of a type: the record fields it orders
// by, in order, and whether one value may belong to one record only.
type indexDef struct {
	Name   string   `json:"name"` // the fields joined with ","
	Fields []string `json:"fields"`
	Unique bool     `json:"unique,omitempty"`
}

// typeState is what the store keeps of a declared type, persisted as JSON
// in the instance's spec bucket under the type's name.
type typeState struct {
	Spec    store.TypeSpec `json:"spec"`
	Indexes []*indexDef    `json:"indexes"`
}

// index returns the index named name, or nil.
func (t *typeState) index(name string) *indexDef {
	if t == nil {
		return nil
	}
	for _, x := range t.Indexes {
		if x.Name == name {
			return x
		}
	}
	return nil
}

// instState is the declared state of one instance. gen is the instance's
// generation number: a store-wide counter value taken by every Declare that
// changes something, so that a cached state is valid exactly when its gen
// equals the one in the file. Values are never reused, not even after
// DropInstance, so a stale cache entry can never look current.
type instState struct {
	gen   uint64
	types map[string]*typeState
}

var emptyState = &instState{types: map[string]*typeState{}}

// state returns the declared state of an instance as of tx, from the cache
// when it is current. It must not be called by Declare's own transaction.
func (s *Store) state(tx *bbolt.Tx, inst string) (*instState, error) {
	return s.stateIn(instBucket(tx, inst), inst)
}

// stateIn is state for a caller that has the instance's bucket, ib (nil
// when the instance has none): a read transaction opens each bucket anew
// on every lookup, so a query opens the instance's once.
func (s *Store) stateIn(ib *bbolt.Bucket, inst string) (*instState, error) {
	if ib == nil {
		return emptyState, nil
	}
	gen := getU64(ib.Get(keyGen))
	if gen == 0 {
		return emptyState, nil
	}
	s.mu.RLock()
	cached := s.states[inst]
	s.mu.RUnlock()
	if cached != nil && cached.gen == gen {
		return cached, nil
	}
	st, err := loadState(ib, gen)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if c := s.states[inst]; c == nil || c.gen < gen {
		s.states[inst] = st
	}
	s.mu.Unlock()
	return st, nil
}

// loadState reads an instance's declared types from its spec bucket.
func loadState(ib *bbolt.Bucket, gen uint64) (*instState, error) {
	st := &instState{gen: gen, types: map[string]*typeState{}}
	sb := ib.Bucket(bucketSpec)
	if sb == nil {
		return st, nil
	}
	err := sb.ForEach(func(k, v []byte) error {
		var t typeState
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("bolt: declared type %s: %w", k, err)
		}
		st.types[string(k)] = &t
		return nil
	})
	return st, err
}

// desiredIndexes turns a TypeSpec into its indexes: one per @indices set,
// one per @unique field (unique), one per reference field. A set naming the
// same fields as another index is the same index; unique wins.
func desiredIndexes(spec store.TypeSpec) ([]*indexDef, error) {
	var out []*indexDef
	add := func(fields []string, unique bool) error {
		if len(fields) == 0 {
			return nil
		}
		for _, f := range fields {
			if f == "" || strings.Contains(f, ",") {
				return fmt.Errorf("bolt: type %s: bad index field %q", spec.Name, f)
			}
		}
		name := strings.Join(fields, ",")
		for _, x := range out {
			if x.Name == name {
				x.Unique = x.Unique || unique
				return nil
			}
		}
		out = append(out, &indexDef{Name: name, Fields: slices.Clone(fields), Unique: unique})
		return nil
	}
	for _, set := range spec.Indices {
		if err := add(set, false); err != nil {
			return nil, err
		}
	}
	for _, f := range spec.Unique {
		if err := add([]string{f}, true); err != nil {
			return nil, err
		}
	}
	for _, f := range spec.Refs {
		if err := add([]string{f}, false); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b *indexDef) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Declare records the types of an instance and brings its indexes in line:
// indexes that are new are built from the existing records, indexes no
// longer declared are dropped, and an index that becomes unique is checked
// (duplicates already stored fail the Declare with a *store.FieldError
// wrapping store.ErrUnique, and nothing changes). Types no longer declared
// lose their indexes; their records stay. Declaring the same types again
// writes nothing.
func (s *Store) Declare(ctx context.Context, inst string, types []store.TypeSpec) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkInst(inst); err != nil {
		return err
	}
	want := make(map[string]*typeState, len(types))
	for _, spec := range types {
		if spec.Name == "" {
			return errors.New("bolt: declared type without a name")
		}
		if _, dup := want[spec.Name]; dup {
			return fmt.Errorf("bolt: type %s declared twice", spec.Name)
		}
		idx, err := desiredIndexes(spec)
		if err != nil {
			return err
		}
		want[spec.Name] = &typeState{Spec: spec, Indexes: idx}
	}
	encoded := make(map[string][]byte, len(want))
	for name, t := range want {
		b, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("bolt: type %s: %w", name, err)
		}
		encoded[name] = b
	}

	// Most calls (every start) change nothing: find out in a read
	// transaction, without taking the writer lock.
	same := false
	err := s.view(func(tx *bbolt.Tx) error {
		ib := instBucket(tx, inst)
		same = declaredAs(ib, encoded) && hasUsage(ib)
		return nil
	})
	if err != nil || same {
		return err
	}

	s.ids.written()
	defer s.ids.written()
	return translate(s.db.Update(func(tx *bbolt.Tx) error {
		ib, err := tx.Bucket(bucketInst).CreateBucketIfNotExists([]byte(inst))
		if err != nil {
			return err
		}
		// An instance stored before usage was kept is counted now, once.
		if err := startUsage(ib); err != nil {
			return err
		}
		if declaredAs(ib, encoded) {
			return nil
		}
		var old *instState
		if gen := getU64(ib.Get(keyGen)); gen != 0 {
			if old, err = loadState(ib, gen); err != nil {
				return err
			}
		} else {
			old = emptyState
		}
		sb, err := ib.CreateBucketIfNotExists(bucketSpec)
		if err != nil {
			return err
		}
		// Types no longer declared: drop their indexes and their spec.
		for name := range old.types {
			if _, ok := want[name]; ok {
				continue
			}
			if err := dropTypeIndexes(ib, name); err != nil {
				return err
			}
			if err := sb.Delete([]byte(name)); err != nil {
				return err
			}
		}
		for name, t := range want {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := s.declareType(ib, old.types[name], t); err != nil {
				return err
			}
			if err := sb.Put([]byte(name), encoded[name]); err != nil {
				return err
			}
		}
		// Take a new generation number from the store-wide counter.
		meta := tx.Bucket(bucketMeta)
		gen := getU64(meta.Get(keyGen)) + 1
		if err := meta.Put(keyGen, u64(gen)); err != nil {
			return err
		}
		return ib.Put(keyGen, u64(gen))
	}))
}

// declaredAs reports whether the instance's persisted types are exactly
// want (and their index buckets exist).
func declaredAs(ib *bbolt.Bucket, want map[string][]byte) bool {
	if ib == nil || getU64(ib.Get(keyGen)) == 0 {
		return len(want) == 0
	}
	sb := ib.Bucket(bucketSpec)
	if sb == nil {
		return len(want) == 0
	}
	n := 0
	same := true
	_ = sb.ForEach(func(k, v []byte) error {
		n++
		w, ok := want[string(k)]
		if !ok || !bytes.Equal(w, v) {
			same = false
			return errStop
		}
		var t typeState
		if json.Unmarshal(v, &t) != nil {
			same = false
			return errStop
		}
		for _, x := range t.Indexes {
			if idxBucket(ib, t.Spec.Name, x.Name) == nil {
				same = false
				return errStop
			}
		}
		return nil
	})
	return same && n == len(want)
}

// errStop ends a ForEach early.
var errStop = errors.New("stop")

// dropTypeIndexes removes every index bucket of a type.
func dropTypeIndexes(ib *bbolt.Bucket, typ string) error {
	xb := ib.Bucket(bucketIdx)
	if xb == nil || xb.Bucket([]byte(typ)) == nil {
		return nil
	}
	return xb.DeleteBucket([]byte(typ))
}

// declareType brings the indexes of one type from old (nil when new) to t.
func (s *Store) declareType(ib *bbolt.Bucket, old, t *typeState) error {
	typ := t.Spec.Name
	xb, err := ib.CreateBucketIfNotExists(bucketIdx)
	if err != nil {
		return err
	}
	tb, err := xb.CreateBucketIfNotExists([]byte(typ))
	if err != nil {
		return err
	}
	// Drop index buckets that are not wanted (including ones left by an
	// older declaration that the persisted state no longer names).
	var drop [][]byte
	_ = tb.ForEachBucket(func(k []byte) error {
		if t.index(string(k)) == nil {
			drop = append(drop, bytes.Clone(k))
		}
		return nil
	})
	for _, k := range drop {
		if err := tb.DeleteBucket(k); err != nil {
			return err
		}
	}
	for _, x := range t.Indexes {
		prev := old.index(x.Name)
		if prev != nil && tb.Bucket([]byte(x.Name)) != nil {
			if x.Unique && !prev.Unique {
				if err := checkUnique(tb.Bucket([]byte(x.Name)), recBucket(ib, typ), typ, x); err != nil {
					return err
				}
			}
			continue
		}
		if tb.Bucket([]byte(x.Name)) != nil {
			if err := tb.DeleteBucket([]byte(x.Name)); err != nil {
				return err
			}
		}
		if err := buildIndex(ib, tb, typ, x); err != nil {
			return err
		}
	}
	return startTrashCount(ib, typ)
}

// startTrashCount counts a type's trashed records, once: from then on
// every write keeps the count (writer.trashed). Instances declared before
// the count existed get it at their next declaration that changes a type.
func startTrashCount(ib *bbolt.Bucket, typ string) error {
	tb, err := ib.CreateBucketIfNotExists(bucketTrashed)
	if err != nil || tb.Get([]byte(typ)) != nil {
		return err
	}
	n := uint64(0)
	if rb := recBucket(ib, typ); rb != nil {
		r := &store.Record{Type: typ}
		err := rb.ForEach(func(k, v []byte) error {
			r.ID = string(k)
			if err := decodeInto(r, v, nil, []string{}); err != nil {
				return err
			}
			if r.Trashed != nil {
				n++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return tb.Put([]byte(typ), u64(n))
}

// buildIndex creates an index bucket and fills it from the type's records.
func buildIndex(ib, tb *bbolt.Bucket, typ string, x *indexDef) error {
	b, err := tb.CreateBucket([]byte(x.Name))
	if err != nil {
		return err
	}
	rb := recBucket(ib, typ)
	if rb == nil {
		return nil
	}
	return rb.ForEach(func(k, v []byte) error {
		r, err := decodeRecord(typ, string(k), v)
		if err != nil {
			return err
		}
		return updateIndex(b, rb, typ, x, nil, r)
	})
}

// checkUnique verifies that no two records share a non-null value of an
// index that is becoming unique. rb is the bucket of the type's records.
func checkUnique(b, rb *bbolt.Bucket, typ string, x *indexDef) error {
	var val []byte
	var ids [][]byte
	// check ends a run of entries with one value.
	check := func() error {
		for i := 1; i < len(ids); i++ {
			if bytes.Equal(ids[i], ids[0]) {
				continue
			}
			if !truncated(val) {
				return &store.FieldError{Err: store.ErrUnique, Type: typ, Field: x.Fields[0], Value: keyValueOf(val)}
			}
			// Truncated strings: compare the records' whole values.
			for j := range i {
				a, err := decodeRecord(typ, string(ids[j]), rb.Get(ids[j]))
				if err != nil {
					return err
				}
				o, err := decodeRecord(typ, string(ids[i]), rb.Get(ids[i]))
				if err != nil {
					return err
				}
				if v, clash := sharedValue(a, o, x.Fields[0], val); clash {
					return &store.FieldError{Err: store.ErrUnique, Type: typ, Field: x.Fields[0], Value: v}
				}
			}
		}
		return nil
	}
	c := b.Cursor()
	for k, _ := c.Seek([]byte{kNull + 1}); k != nil; k, _ = c.Next() {
		v, ok1 := valuePart(k, 1)
		id, ok2 := entryID(k, 1)
		if !ok1 || !ok2 {
			return fmt.Errorf("bolt: index %s.%s: corrupt key", typ, x.Name)
		}
		if !bytes.Equal(v, val) {
			if err := check(); err != nil {
				return err
			}
			val, ids = bytes.Clone(v), ids[:0]
		}
		ids = append(ids, bytes.Clone(id))
	}
	return check()
}
