package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"time"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// Write applies ops in one transaction: all of them or, when one fails,
// none. Concurrent Writes may share a transaction (and its commit); a
// failing Write is taken out of it, so it never takes others down.
//
// Decisions store.go leaves open, taken here:
//   - An OpUpsert without an ID gets a new one (store.PrepareOps).
//   - A nil value in Set is stored as a present null ("explicitly cleared"),
//     which arcql treats as missing.
//   - Impl is taken on create only, like CreatedBy.
//   - Changed is true whenever the op found its record, even when trash,
//     untrash or a ref op had nothing to change (the record was already in
//     the wanted state).
//   - OpAddRef, OpRemoveRef, OpRemoveValues and OpMath set Updated to
//     Op.Now when they change a field; trash and untrash leave Updated
//     alone.
//   - A ref op on a field holding something other than a list (or null)
//     is an error.
//
// The instance's usage (usage.go) changes in the same transaction, and
// the quota is checked there, against the usage this transaction sees:
// a Write past it returns the *store.QuotaError and, like any failing
// Write, is taken out of the transaction with nothing of it written.
func (s *Store) Write(ctx context.Context, inst string, ops []store.Op, quota store.Quota) ([]store.OpResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkInst(inst); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return []store.OpResult{}, nil
	}
	// Everything that must not differ between runs of the transaction
	// function (the group commit may run it twice) is settled here: ids,
	// normalized values.
	prepared, err := store.PrepareOps(ops)
	if err != nil {
		return nil, err
	}

	var results []store.OpResult
	var lastSeq uint64 // the Seq of the Write's last change; 0 for none
	err = s.update(func(tx *bbolt.Tx) error {
		results = make([]store.OpResult, len(prepared))
		lastSeq = 0
		w, before, err := s.writerIn(tx, inst)
		if err != nil {
			return err
		}
		ib := w.ib
		for i := range prepared {
			if results[i], err = w.apply(&prepared[i]); err != nil {
				return err
			}
		}
		after := store.Usage{Records: before.Records + w.delta.Records, StorageBytes: before.StorageBytes + w.delta.StorageBytes}
		if err := quota.Check(prepared, before, after); err != nil {
			return err
		}
		if len(w.changes) > 0 {
			if lastSeq, err = s.appendChanges(ib, w.changes, time.Now()); err != nil {
				return err
			}
		}
		return putUsage(ib, after)
	})
	if err != nil {
		return nil, err
	}
	if lastSeq > 0 {
		s.feed.Wake(inst)
	}
	return results, nil
}

// writer applies ops to one instance inside a write transaction.
type writer struct {
	ib *bbolt.Bucket
	st *instState
	// delta is what the ops applied so far changed the instance's usage
	// by.
	delta store.Usage
	// changes are the feed entries of the ops applied so far (changes.go).
	changes []store.Change
}

// writerIn starts the writes of a transaction to an instance (creating
// its bucket), and returns its usage before them.
func (s *Store) writerIn(tx *bbolt.Tx, inst string) (writer, store.Usage, error) {
	st, err := s.state(tx, inst)
	if err != nil {
		return writer{}, store.Usage{}, err
	}
	ib, err := bucketIn(tx.Bucket(bucketInst), []byte(inst))
	if err != nil {
		return writer{}, store.Usage{}, err
	}
	before, err := usageOf(ib)
	if err != nil {
		return writer{}, store.Usage{}, err
	}
	return writer{ib: ib, st: st}, before, nil
}

// note records the change an applied op made, if any.
func (w *writer) note(op *store.Op, old, next *store.Record) {
	if c, ok := store.OpChange(op, old, next); ok {
		w.changes = append(w.changes, c)
	}
}

func (w *writer) apply(op *store.Op) (store.OpResult, error) {
	rb, err := w.records(op.Type, op.Kind == store.OpUpsert)
	if err != nil {
		return store.OpResult{}, err
	}
	key := []byte(op.ID)
	var old *store.Record
	oldSize := 0
	if rb != nil {
		if v := rb.Get(key); v != nil {
			if old, err = decodeRecord(op.Type, op.ID, v); err != nil {
				return store.OpResult{}, err
			}
			oldSize = len(v)
		}
	}
	if old == nil && op.Kind != store.OpUpsert {
		return store.OpResult{}, nil
	}

	var res store.OpResult
	var rec *store.Record
	switch op.Kind {
	case store.OpUpsert:
		if old != nil {
			if err := store.CheckKept(op, old.Fields, op.Set); err != nil {
				return store.OpResult{}, err
			}
		}
		rec = upserted(old, op)
		if old == nil {
			for _, f := range op.Required {
				if rec.Fields[f] == nil {
					return store.OpResult{}, &store.FieldError{Err: store.ErrRequired, Type: op.Type, Field: f}
				}
			}
			res.Created = true
		}
	case store.OpDelete:
		if err := rb.Delete(key); err != nil {
			return store.OpResult{}, err
		}
		if err := w.reindex(op.Type, old, nil); err != nil {
			return store.OpResult{}, err
		}
		if old.Trashed != nil {
			if err := w.trashed(op.Type, -1); err != nil {
				return store.OpResult{}, err
			}
		}
		w.delta.Records--
		w.delta.StorageBytes -= int64(oldSize)
		w.note(op, old, nil)
		return store.OpResult{Changed: true}, w.count(op.Type, -1)
	case store.OpTrash:
		if old.Trashed != nil {
			return store.OpResult{Changed: true}, nil
		}
		rec = shallowCopy(old)
		now := op.Now.UTC()
		rec.Trashed = &now
	case store.OpUntrash:
		if old.Trashed == nil {
			return store.OpResult{Changed: true}, nil
		}
		rec = shallowCopy(old)
		rec.Trashed = nil
	case store.OpAddRef, store.OpRemoveRef, store.OpMath, store.OpRemoveValues:
		// Computed from the record this transaction reads: no write comes
		// between the read and the change.
		set, err := op.Edit(old.Fields)
		if err != nil {
			return store.OpResult{}, err
		}
		if len(set) == 0 {
			return store.OpResult{Changed: true}, nil
		}
		rec = shallowCopy(old)
		maps.Copy(rec.Fields, set)
		rec.Updated = op.Now.UTC()
	default:
		return store.OpResult{}, fmt.Errorf("bolt: unknown op kind %d", op.Kind)
	}

	enc := encodeRecord(make([]byte, 0, recordSize(rec)), rec)
	if err := rb.Put(key, enc); err != nil {
		return store.OpResult{}, err
	}
	w.delta.StorageBytes += int64(len(enc) - oldSize)
	if old == nil {
		w.delta.Records++
	}
	if err := w.reindex(op.Type, old, rec); err != nil {
		return store.OpResult{}, err
	}
	if old == nil {
		if err := w.count(op.Type, 1); err != nil {
			return store.OpResult{}, err
		}
	}
	if was, is := old != nil && old.Trashed != nil, rec.Trashed != nil; was != is {
		delta := int64(1)
		if was {
			delta = -1
		}
		if err := w.trashed(op.Type, delta); err != nil {
			return store.OpResult{}, err
		}
	}
	res.Changed = true
	w.note(op, old, rec)
	if op.Kind == store.OpUpsert {
		// rec is the caller's alone: built for this run of the
		// transaction function from a record decoded here and values
		// copied from op.Set, and nothing of the transaction keeps it
		// (the index entries, the record and the change are encoded).
		res.Record = rec
	}
	return res, nil
}

// upserted is the record an OpUpsert leaves: Set merged into old (or a new
// record), each key of Set replacing the field whole.
func upserted(old *store.Record, op *store.Op) *store.Record {
	var rec *store.Record
	if old == nil {
		rec = &store.Record{
			Type:      op.Type,
			ID:        op.ID,
			Created:   op.Now.UTC(),
			CreatedBy: op.CreatedBy,
			Impl:      op.Impl,
			Fields:    make(map[string]any, len(op.Set)),
		}
	} else {
		rec = shallowCopy(old)
	}
	rec.Updated = op.Now.UTC()
	for k, v := range op.Set {
		// op.Set was normalized into fresh values for this Write, but the
		// transaction function may run twice: copy again.
		rec.Fields[k] = cloneValue(v)
	}
	return rec
}

// shallowCopy copies a record and its field map (not the values, which are
// replaced, never mutated).
func shallowCopy(r *store.Record) *store.Record {
	c := *r
	c.Fields = maps.Clone(r.Fields)
	if c.Fields == nil {
		c.Fields = map[string]any{}
	}
	return &c
}

// records returns the bucket of a type's records, creating it if asked.
func (w *writer) records(typ string, create bool) (*bbolt.Bucket, error) {
	if !create {
		return recBucket(w.ib, typ), nil
	}
	rb, err := bucketIn(w.ib, bucketRec)
	if err != nil {
		return nil, err
	}
	return bucketIn(rb, []byte(typ))
}

// reindex moves a record's entries in every index of its type.
func (w *writer) reindex(typ string, old, new *store.Record) error {
	t := w.st.types[typ]
	if t == nil {
		return nil
	}
	for _, x := range t.Indexes {
		b := idxBucket(w.ib, typ, x.Name)
		if b == nil {
			return fmt.Errorf("bolt: index %s.%s is declared but missing", typ, x.Name)
		}
		if err := updateIndex(b, recBucket(w.ib, typ), typ, x, old, new); err != nil {
			return err
		}
	}
	return nil
}

// count adds delta to the record count of a type (used by the planner).
func (w *writer) count(typ string, delta int64) error {
	cb, err := bucketIn(w.ib, bucketCount)
	if err != nil {
		return err
	}
	key := []byte(typ)
	n := int64(getU64(cb.Get(key))) + delta
	if n < 0 {
		n = 0
	}
	return cb.Put(key, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// trashed adds delta to the count of a type's trashed records, where it
// is kept (startTrashCount began it).
func (w *writer) trashed(typ string, delta int64) error {
	tb := w.ib.Bucket(bucketTrashed)
	if tb == nil {
		return nil
	}
	v := tb.Get([]byte(typ))
	if v == nil {
		return nil
	}
	n := int64(getU64(v)) + delta
	if n < 0 {
		return fmt.Errorf("bolt: the count of trashed %s records went below zero", typ)
	}
	return tb.Put([]byte(typ), u64(uint64(n)))
}

// trashedCount is the number of trashed records of a type; ok is false
// where it is not kept.
func trashedCount(ib *bbolt.Bucket, typ string) (n int, ok bool) {
	if ib == nil {
		return 0, false
	}
	tb := ib.Bucket(bucketTrashed)
	if tb == nil {
		return 0, false
	}
	v := tb.Get([]byte(typ))
	if v == nil {
		return 0, false
	}
	return int(getU64(v)), true
}

// recordCount is the number of records of a type.
func recordCount(ib *bbolt.Bucket, typ string) int {
	if ib == nil {
		return 0
	}
	cb := ib.Bucket(bucketCount)
	if cb == nil {
		return 0
	}
	return int(getU64(cb.Get([]byte(typ))))
}
