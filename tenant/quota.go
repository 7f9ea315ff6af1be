package tenant

import (
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
)

// Quota bounds what an instance may hold and do (setting quota); a zero
// figure is no bound. Records and StorageBytes bound its records as the
// store counts them (store.Usage: live and trashed records, their stored
// bytes): a write that would pass one is refused whole. FunctionCallsPerDay
// bounds its function calls per UTC day (Meter).
type Quota struct {
	Records             int64 `json:"records"`
	StorageBytes        int64 `json:"storageBytes"`
	FunctionCallsPerDay int64 `json:"functionCallsPerDay"`
}

// Check reports whether every figure is 0 (no bound) or positive.
func (q Quota) Check() error {
	for _, f := range []struct {
		name string
		n    int64
	}{{"records", q.Records}, {"storageBytes", q.StorageBytes}, {"functionCallsPerDay", q.FunctionCallsPerDay}} {
		if f.n < 0 {
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "quota.%s must not be negative (0: no limit)", f.name)
		}
	}
	return nil
}

// Store is the part of the quota a store enforces on writes.
func (q Quota) Store() store.Quota {
	return store.Quota{Records: q.Records, StorageBytes: q.StorageBytes}
}
