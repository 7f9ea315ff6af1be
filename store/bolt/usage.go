package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// Usage (store.Usage) is kept in the instance's bucket, changed in the
// transaction of every write (writer.delta), so that it is exact whatever
// happens to the process: a write and its count commit together or not
// at all.
//
//	inst/<instance>           "usage" → records ‖ storage bytes, two
//	                          big-endian uint64
//	inst/<instance>/counters  <name> → value, big-endian int64
//
// StorageBytes is the sum of the lengths of the instance's encoded
// records (codec.go) as stored under rec/; keys and indexes are not
// counted. An instance stored before the count existed has no "usage"
// key: its records are counted once, by a scan, at its next Declare (at
// start) or write, whichever comes first; Usage counts without storing
// until then.
var (
	keyUsage       = []byte("usage")
	bucketCounters = []byte("counters")
)

// Usage returns the instance's usage (store.Store).
func (s *Store) Usage(ctx context.Context, inst string) (store.Usage, error) {
	if err := ctx.Err(); err != nil {
		return store.Usage{}, err
	}
	if err := checkInst(inst); err != nil {
		return store.Usage{}, err
	}
	var u store.Usage
	err := s.view(func(tx *bbolt.Tx) error {
		ib := instBucket(tx, inst)
		if ib == nil {
			return nil
		}
		var err error
		if u, err = usageOf(ib); err != nil {
			return err
		}
		if cb := ib.Bucket(bucketCounters); cb != nil {
			u.Counters = map[string]int64{}
			return cb.ForEach(func(k, v []byte) error {
				u.Counters[string(k)] = int64(getU64(v))
				return nil
			})
		}
		return nil
	})
	return u, err
}

// AddCounters adds to instances' counters in one transaction
// (store.Store); a counter that reaches 0 is deleted.
func (s *Store) AddCounters(ctx context.Context, adds map[string]map[string]int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for inst, add := range adds {
		if err := checkInst(inst); err != nil {
			return err
		}
		for name := range add {
			if name == "" {
				return fmt.Errorf("bolt: instance %s: a counter without a name", inst)
			}
		}
	}
	return s.update(func(tx *bbolt.Tx) error {
		for inst, add := range adds {
			if len(add) == 0 {
				continue
			}
			ib, err := tx.Bucket(bucketInst).CreateBucketIfNotExists([]byte(inst))
			if err != nil {
				return err
			}
			cb, err := ib.CreateBucketIfNotExists(bucketCounters)
			if err != nil {
				return err
			}
			for name, d := range add {
				n := int64(getU64(cb.Get([]byte(name)))) + d
				if n == 0 {
					err = cb.Delete([]byte(name))
				} else {
					err = cb.Put([]byte(name), u64(uint64(n)))
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// hasUsage reports whether an instance's usage is kept (or there is no
// instance to count).
func hasUsage(ib *bbolt.Bucket) bool { return ib == nil || ib.Get(keyUsage) != nil }

// usageOf returns the instance's records and their size: as kept, or
// counted when not kept yet.
func usageOf(ib *bbolt.Bucket) (store.Usage, error) {
	if v := ib.Get(keyUsage); v != nil {
		if len(v) != 16 {
			return store.Usage{}, errors.New("bolt: corrupt usage")
		}
		return store.Usage{
			Records:      int64(binary.BigEndian.Uint64(v)),
			StorageBytes: int64(binary.BigEndian.Uint64(v[8:])),
		}, nil
	}
	return countUsage(ib)
}

// countUsage counts the records of every type of an instance and the
// bytes they take: one scan.
func countUsage(ib *bbolt.Bucket) (store.Usage, error) {
	var u store.Usage
	rb := ib.Bucket(bucketRec)
	if rb == nil {
		return u, nil
	}
	err := rb.ForEachBucket(func(typ []byte) error {
		return rb.Bucket(typ).ForEach(func(_, v []byte) error {
			u.Records++
			u.StorageBytes += int64(len(v))
			return nil
		})
	})
	return u, err
}

// putUsage stores an instance's records and their size.
func putUsage(ib *bbolt.Bucket, u store.Usage) error {
	if u.Records < 0 || u.StorageBytes < 0 {
		return fmt.Errorf("bolt: the usage count went below zero (%d records, %d bytes)", u.Records, u.StorageBytes)
	}
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(u.Records))
	return ib.Put(keyUsage, binary.BigEndian.AppendUint64(v, uint64(u.StorageBytes)))
}

// startUsage counts an instance's usage once, where it is not kept yet.
func startUsage(ib *bbolt.Bucket) error {
	if hasUsage(ib) {
		return nil
	}
	u, err := countUsage(ib)
	if err != nil {
		return err
	}
	return putUsage(ib, u)
}
