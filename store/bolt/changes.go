package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// The change feed (store.Change) of an instance is a bucket of its own,
// written in the transaction of the Write whose ops made the changes:
//
//	inst/<instance>/changes   <seq, big-endian uint64> → encoded change
//
// The next Seq is the last key's plus one, read in the same transaction,
// and transactions commit one at a time, so the numbers follow the commit
// order with no gap, and a change is visible exactly when its write is
// (a failed write, taken out of its transaction, appends nothing). After
// the commit, Write wakes the instance's waiters (Wait): no polling.
//
// Trimming (Config.Retention) runs in the write transaction whenever the
// Seq crosses a multiple of Retention.TrimEvery: it deletes from the
// oldest key while the change is both older than Retention.Age and not
// among the newest Retention.Count, and not after the instance's
// store.Hold (keyHold), at most Retention.MaxTrim of them. Changes learns that history is gone
// from the numbers alone: the first key after `after` is not after+1.
//
// An encoded change: Unix nanoseconds (8 bytes), the op (1 byte), then
// uvarint-length-prefixed type, id and changed fields (a uvarint count
// first), and for DELETED the record before (codec.go) to the end.
var bucketChanges = []byte("changes")

// changeOps numbers store.ChangeOp in the encoding.
var changeOps = []store.ChangeOp{store.ChangeCreated, store.ChangeUpdated, store.ChangeDeleted, store.ChangeTrashed, store.ChangeUntrashed}

// appendChanges appends a Write's changes to the instance's feed and
// trims it when due; it returns the Seq of the last one.
func (s *Store) appendChanges(ib *bbolt.Bucket, changes []store.Change, now time.Time) (uint64, error) {
	cb, err := bucketIn(ib, bucketChanges)
	if err != nil {
		return 0, err
	}
	// The feed only grows at its end (and is trimmed from its start), so
	// a page that splits is left full rather than half empty: no write
	// would ever fill the other half. The feed takes half the pages, and
	// the appends split a page half as often.
	cb.FillPercent = 1.0
	prev := uint64(0)
	if k, _ := cb.Cursor().Last(); k != nil {
		prev = getU64(k)
	}
	seq := prev
	for i := range changes {
		seq++
		// bbolt keeps the value until the commit: one buffer each.
		c := &changes[i]
		if err := cb.Put(u64(seq), encodeChange(make([]byte, 0, changeSize(c)), c, now)); err != nil {
			return 0, err
		}
	}
	if r := s.cfg.Retention; r.TrimDue(prev, seq) {
		if err := trimChanges(cb, r, holdOf(ib).Limit(seq, now), seq, now); err != nil {
			return 0, err
		}
	}
	return seq, nil
}

// trimChanges deletes the oldest changes that retention lets go, none
// past limit (a Hold's) and at most Retention.MaxTrim of them.
func trimChanges(cb *bbolt.Bucket, r store.Retention, limit, last uint64, now time.Time) error {
	cutoff := now.Add(-r.Age).UnixNano()
	var gone [][]byte
	c := cb.Cursor()
	for k, v := c.First(); k != nil && len(gone) < r.MaxTrim(); k, v = c.Next() {
		if seq := getU64(k); last-seq < uint64(r.Count) || seq > limit {
			break
		}
		if r.Age > 0 && (len(v) < 8 || int64(binary.BigEndian.Uint64(v)) > cutoff) {
			break
		}
		gone = append(gone, k)
	}
	for _, k := range gone {
		if err := cb.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// keyHold is the instance's Hold on its feed (HoldChanges): After, then
// Until in Unix nanoseconds, 8 bytes each; absent when there is none.
var keyHold = []byte("changes-hold")

// holdOf reads the instance's Hold.
func holdOf(ib *bbolt.Bucket) store.Hold {
	v := ib.Get(keyHold)
	if len(v) != 16 {
		return store.Hold{}
	}
	return store.Hold{After: getU64(v[:8]), Until: time.Unix(0, int64(getU64(v[8:])))}
}

// HoldChanges sets or releases the instance's Hold (store.Store). An
// instance without a bucket has no changes to hold.
func (s *Store) HoldChanges(ctx context.Context, inst string, after uint64, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkInst(inst); err != nil {
		return err
	}
	return s.update(func(tx *bbolt.Tx) error {
		ib := tx.Bucket(bucketInst).Bucket([]byte(inst))
		switch {
		case ib == nil:
			return nil
		case until.IsZero():
			return ib.Delete(keyHold)
		}
		return ib.Put(keyHold, append(u64(after), u64(uint64(until.UnixNano()))...))
	})
}

// Changes returns the instance's changes after after (store.Store).
func (s *Store) Changes(ctx context.Context, inst string, after uint64, limit int) ([]store.Change, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkInst(inst); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("bolt: changes of %s: limit %d is not positive", inst, limit)
	}
	var out []store.Change
	err := s.view(func(tx *bbolt.Tx) error {
		cb := changesBucket(tx, inst)
		if cb == nil {
			return nil
		}
		c := cb.Cursor()
		k, v := c.Seek(u64(after + 1))
		if k != nil && getU64(k) != after+1 {
			return fmt.Errorf("bolt: changes of %s after %d: %w", inst, after, store.ErrHistoryGone)
		}
		for ; k != nil && len(out) < limit; k, v = c.Next() {
			ch, err := decodeChange(v)
			if err != nil {
				return fmt.Errorf("bolt: change %d of %s: %w", getU64(k), inst, err)
			}
			ch.Seq = getU64(k)
			out = append(out, ch)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LastChange returns the newest Seq of the instance (store.Store).
func (s *Store) LastChange(ctx context.Context, inst string) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := checkInst(inst); err != nil {
		return 0, err
	}
	var last uint64
	err := s.view(func(tx *bbolt.Tx) error {
		if cb := changesBucket(tx, inst); cb != nil {
			if k, _ := cb.Cursor().Last(); k != nil {
				last = getU64(k)
			}
		}
		return nil
	})
	return last, err
}

// Wait blocks until the instance has a change after after (store.Store).
// Write wakes the waiters of an instance once its transaction has
// committed; a waiter registers before it reads LastChange, so a commit
// between the two still wakes it.
func (s *Store) Wait(ctx context.Context, inst string, after uint64) (uint64, error) {
	return s.feed.Wait(ctx, inst, after, s.LastChange, s.closed, fmt.Errorf("bolt: %w", store.ErrUnavailable))
}

// changesBucket is the instance's feed bucket, or nil.
func changesBucket(tx *bbolt.Tx, inst string) *bbolt.Bucket {
	ib := instBucket(tx, inst)
	if ib == nil {
		return nil
	}
	return ib.Bucket(bucketChanges)
}

func encodeChange(buf []byte, c *store.Change, now time.Time) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(now.UnixNano()))
	op := byte(0)
	for i, o := range changeOps {
		if o == c.Op {
			op = byte(i)
		}
	}
	buf = append(buf, op)
	buf = appendString(buf, c.Type)
	buf = appendString(buf, c.ID)
	buf = binary.AppendUvarint(buf, uint64(len(c.Changed)))
	for _, f := range c.Changed {
		buf = appendString(buf, f)
	}
	if c.Before != nil {
		buf = encodeRecord(buf, c.Before)
	}
	return buf
}

// changeSize bounds the length of encodeChange's encoding of c.
func changeSize(c *store.Change) int {
	n := 8 + 1 + 3*binary.MaxVarintLen64 + len(c.Type) + len(c.ID)
	for _, f := range c.Changed {
		n += binary.MaxVarintLen64 + len(f)
	}
	if c.Before != nil {
		n += recordSize(c.Before)
	}
	return n
}

var errCorruptChange = errors.New("corrupt change")

func decodeChange(b []byte) (store.Change, error) {
	var c store.Change
	if len(b) < 9 || int(b[8]) >= len(changeOps) {
		return c, errCorruptChange
	}
	c.Time = time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC()
	c.Op = changeOps[b[8]]
	b = b[9:]
	var ok bool
	if c.Type, b, ok = readString(b); !ok {
		return c, errCorruptChange
	}
	if c.ID, b, ok = readString(b); !ok {
		return c, errCorruptChange
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return c, errCorruptChange
	}
	b = b[w:]
	if n > 0 {
		c.Changed = make([]string, n)
		for i := range c.Changed {
			if c.Changed[i], b, ok = readString(b); !ok {
				return c, errCorruptChange
			}
		}
	}
	if c.Op == store.ChangeDeleted && len(b) > 0 {
		before, err := decodeRecord(c.Type, c.ID, b)
		if err != nil {
			return c, err
		}
		c.Before = before
	}
	return c, nil
}

func readString(b []byte) (string, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", nil, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}
