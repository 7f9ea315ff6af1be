package tenant

import (
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
)

// Quotas (setting quota): the store refuses a write that would pass the
// instance's records or storageBytes quota, whole, before any of it
// applies (store.Quota.Check: deletes, trash and writes that lower usage
// always pass; reads are never bounded); the meter (Meter) refuses a
// function call past functionCallsPerDay. Both answer QUOTA_EXCEEDED
// naming the quota and its limit, with extensions.quota and
// extensions.limit for programs.

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

// QuotaExceeded is what a client sees of a write of inst the store
// refused (qe): QUOTA_EXCEEDED naming the quota, its limit and the usage
// the write would have made.
func QuotaExceeded(inst *Instance, qe *store.QuotaError) error {
	unit := qe.Quota
	if unit == "storageBytes" {
		unit = "bytes of storage"
	}
	err := errcode.Wrap(errcode.QuotaExceeded, qe,
		"instance %s is at its %s quota of %d: this write would make %d %s, so nothing of it was written (delete records, or raise the quota)",
		inst.Domain, qe.Quota, qe.Limit, qe.Usage, unit)
	err.Extensions = map[string]any{"quota": qe.Quota, "limit": qe.Limit}
	return err
}
