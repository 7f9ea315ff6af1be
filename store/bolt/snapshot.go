package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// Snapshot is one read transaction (store.Store): every read of it sees
// the file as of the moment it began, while writes go on. bbolt keeps
// the pages that transaction reads until it ends, so the file may grow
// by what is written meanwhile; and a commit that must grow the memory
// map waits for open read transactions, so a write needing it waits for
// the snapshot to close (the map grows by doubling, so this is rare).
func (s *Store) Snapshot(ctx context.Context) (store.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		return nil, translate(err)
	}
	return &snapshot{tx: tx}, nil
}

// snapshot is store.Snapshot over one bbolt read transaction.
type snapshot struct{ tx *bbolt.Tx }

func (sn *snapshot) Close() error { return sn.tx.Rollback() }

func (sn *snapshot) Instances(ctx context.Context) ([]string, error) {
	var out []string
	err := sn.tx.Bucket(bucketInst).ForEachBucket(func(k []byte) error {
		ib := sn.tx.Bucket(bucketInst).Bucket(k)
		if ib.Bucket(bucketRec) != nil || ib.Bucket(bucketCounters) != nil {
			out = append(out, string(k))
		}
		return nil
	})
	return out, err
}

func (sn *snapshot) Records(ctx context.Context, inst string, fn func(*store.Record) error) error {
	ib := instBucket(sn.tx, inst)
	if ib == nil {
		return nil
	}
	rb := ib.Bucket(bucketRec)
	if rb == nil {
		return nil
	}
	n := 0
	return rb.ForEachBucket(func(typ []byte) error {
		return rb.Bucket(typ).ForEach(func(id, v []byte) error {
			if n++; n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			r, err := decodeRecord(string(typ), string(id), v)
			if err != nil {
				return fmt.Errorf("bolt: %s %s: %w", typ, id, err)
			}
			return fn(r)
		})
	})
}

func (sn *snapshot) Counters(ctx context.Context, inst string) (map[string]int64, error) {
	ib := instBucket(sn.tx, inst)
	if ib == nil {
		return nil, nil
	}
	cb := ib.Bucket(bucketCounters)
	if cb == nil {
		return nil, nil
	}
	var out map[string]int64
	err := cb.ForEach(func(k, v []byte) error {
		if out == nil {
			out = map[string]int64{}
		}
		out[string(k)] = int64(getU64(v))
		return nil
	})
	return out, err
}

func (sn *snapshot) DocKinds(ctx context.Context) ([]string, error) {
	var out []string
	err := sn.tx.Bucket(bucketDocs).ForEachBucket(func(k []byte) error {
		out = append(out, string(k))
		return nil
	})
	slices.Sort(out)
	return out, err
}

func (sn *snapshot) Docs(ctx context.Context, kind string, fn func(key string, doc []byte) error) error {
	kb := sn.tx.Bucket(bucketDocs).Bucket([]byte(kind))
	if kb == nil {
		return nil
	}
	return kb.ForEach(func(k, v []byte) error {
		if v == nil {
			return nil
		}
		return fn(string(k), bytes.Clone(v))
	})
}

// Load writes records as they are (store.Store) in one transaction,
// through the committer like every write: indexes, counts and usage
// change with them; the change feed does not.
func (s *Store) Load(ctx context.Context, inst string, recs []*store.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkInst(inst); err != nil {
		return err
	}
	prepared, err := store.PrepareRecords(recs)
	if err != nil || len(prepared) == 0 {
		return err
	}
	return s.update(func(tx *bbolt.Tx) error {
		w, before, err := s.writerIn(tx, inst)
		if err != nil {
			return err
		}
		for _, r := range prepared {
			if err := w.load(r); err != nil {
				return err
			}
		}
		return putUsage(w.ib, store.Usage{Records: before.Records + w.delta.Records, StorageBytes: before.StorageBytes + w.delta.StorageBytes})
	})
}

// load puts one new record with its index entries and counts.
func (w *writer) load(r *store.Record) error {
	rb, err := w.records(r.Type, true)
	if err != nil {
		return err
	}
	if rb.Get([]byte(r.ID)) != nil {
		return fmt.Errorf("bolt: %s %s: %w", r.Type, r.ID, store.ErrExists)
	}
	enc := encodeRecord(nil, r)
	if err := rb.Put([]byte(r.ID), enc); err != nil {
		return err
	}
	w.delta.Records++
	w.delta.StorageBytes += int64(len(enc))
	if err := w.reindex(r.Type, nil, r); err != nil {
		return err
	}
	if r.Trashed != nil {
		if err := w.trashed(r.Type, 1); err != nil {
			return err
		}
	}
	return w.count(r.Type, 1)
}
