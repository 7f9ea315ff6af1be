package bolt

import (
	"context"
	"errors"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// DropInstance removes the instance's bucket: its records, indexes,
// declared types and counts. Dropping an unknown instance is not an error.
func (s *Store) DropInstance(ctx context.Context, inst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkInst(inst); err != nil {
		return err
	}
	err := s.update(func(tx *bbolt.Tx) error {
		err := tx.Bucket(bucketInst).DeleteBucket([]byte(inst))
		if errors.Is(err, bolterrors.ErrBucketNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	// The cached state can no longer match (generations are never reused);
	// forget it to free the memory.
	s.mu.Lock()
	delete(s.states, inst)
	s.mu.Unlock()
	return nil
}
