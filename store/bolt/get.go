package bolt

import (
	"context"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// Get returns one record, trashed or not; store.ErrNotFound when absent.
func (s *Store) Get(ctx context.Context, inst, typ, id string) (*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rec *store.Record
	err := s.view(func(tx *bbolt.Tx) error {
		rb := recBucket(instBucket(tx, inst), typ)
		if rb == nil {
			return nil
		}
		v := rb.Get([]byte(id))
		if v == nil {
			return nil
		}
		var err error
		rec, err = decodeRecord(typ, id, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("bolt: %s %s: %w", typ, id, store.ErrNotFound)
	}
	return rec, nil
}

// GetMany returns the records among ids that exist, keyed by id, in one
// read transaction.
func (s *Store) GetMany(ctx context.Context, inst, typ string, ids []string) (map[string]*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]*store.Record, len(ids))
	err := s.view(func(tx *bbolt.Tx) error {
		rb := recBucket(instBucket(tx, inst), typ)
		if rb == nil {
			return nil
		}
		for i, id := range ids {
			if i%1024 == 1023 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if _, done := out[id]; done {
				continue
			}
			v := rb.Get([]byte(id))
			if v == nil {
				continue
			}
			rec, err := decodeRecord(typ, id, v)
			if err != nil {
				return err
			}
			out[id] = rec
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
