package gql

import (
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Quotas (setting quota, tenant.Quota): the store refuses a write that
// would pass the instance's records or storageBytes quota, whole, before
// any of it applies (store.Quota.Check: deletes, trash and writes that
// lower usage always pass; reads are never bounded); the meter
// (tenant.Meter) refuses a function call past functionCallsPerDay. Both
// answer QUOTA_EXCEEDED naming the quota and its limit, with
// extensions.quota and extensions.limit for programs.

// quotaError is what a client sees of a write the store refused.
func quotaError(inst *tenant.Instance, qe *store.QuotaError) error {
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
