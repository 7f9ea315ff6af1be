package store

import (
	"errors"
	"fmt"
)

// Usage is what an instance takes up in a store. Records and StorageBytes
// are kept by the store with every Write, in step with the records (never
// counted by a scan per call); Counters are what the service adds with
// AddCounters (its usage meters: requests, function calls).
type Usage struct {
	// Records counts the instance's records of every type, live and
	// trashed (a trashed record still takes its room until deleted).
	Records int64
	// StorageBytes is the sum of the sizes of those records, each as the
	// store measures it (the embedded store: its encoded value; MongoDB:
	// its BSON document). Indexes and the store's own overhead are not
	// counted.
	StorageBytes int64
	// Counters are the instance's named counters (AddCounters); nil when
	// it has none.
	Counters map[string]int64
}

// Quota bounds what a Write may take an instance to. A zero field is no
// bound; the zero Quota bounds nothing.
type Quota struct {
	Records      int64
	StorageBytes int64
}

// ErrQuota: a Write would take an instance past a Quota; nothing of it is
// written. Returned wrapped in *QuotaError.
var ErrQuota = errors.New("store: quota exceeded")

// QuotaError names the quota a refused Write would have passed.
type QuotaError struct {
	// Quota is "records" or "storageBytes".
	Quota string
	// Limit is the quota; Usage what the Write would have made it.
	Limit, Usage int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("the write would take the instance to %d %s, past its quota of %d", e.Usage, quotaUnit(e.Quota), e.Limit)
}

func (e *QuotaError) Unwrap() error { return ErrQuota }

func quotaUnit(q string) string {
	if q == "storageBytes" {
		return "bytes of storage (storageBytes)"
	}
	return q
}

// Check is the one rule every store applies to a Write of ops that would
// change an instance's usage from before to after: it is refused when a
// bounded figure would end above its bound and above where it was. So a
// write that lowers usage (a delete, an update that shrinks a record)
// always passes, even past a bound lowered below the usage, and a Write
// of only deletes, trashes and untrashes is never refused (trash keeps
// the record, and its size may grow by the time it records).
func (q Quota) Check(ops []Op, before, after Usage) error {
	if q == (Quota{}) || onlyLowers(ops) {
		return nil
	}
	if q.Records > 0 && after.Records > q.Records && after.Records > before.Records {
		return &QuotaError{Quota: "records", Limit: q.Records, Usage: after.Records}
	}
	if q.StorageBytes > 0 && after.StorageBytes > q.StorageBytes && after.StorageBytes > before.StorageBytes {
		return &QuotaError{Quota: "storageBytes", Limit: q.StorageBytes, Usage: after.StorageBytes}
	}
	return nil
}

// Applies reports whether Check could refuse ops: q bounds something and
// ops do more than delete, trash and untrash. A store that must read to
// learn a Write's effect asks first.
func (q Quota) Applies(ops []Op) bool { return q != (Quota{}) && !onlyLowers(ops) }

// onlyLowers reports whether every op deletes, trashes or untrashes.
func onlyLowers(ops []Op) bool {
	for i := range ops {
		switch ops[i].Kind {
		case OpDelete, OpTrash, OpUntrash:
		default:
			return false
		}
	}
	return true
}
