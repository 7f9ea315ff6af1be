// Package access decides what a caller may read beyond the owner rule:
// the AccessRight records (grants) of an instance.
//
// # The model
//
// Without grants a user session reads and changes only the records its
// account created (and its own Account record); the instance token reads
// and changes everything. An AccessRight widens that (README, "Access
// rights"):
//
//   - RBP (resource-based): an account grants on records it owns, one
//     (resource: <id>) or every record of resourceType it owns, present and
//     future (resource: "*"). resourceOwnerId is the granting account; the
//     service sets it, and only the instance token may name another.
//   - SBP (scope-based, the instance token's only): the operation on every
//     record of resourceType, whoever owns it.
//
// members are account ids, "*" (every account of the instance) or
// "anonymous" (callers without a token). A grant counts while approved is
// not false and startDate ≤ now < endDate.
//
// # What is enforced so far
//
// Reads: a grant with operationType Query or * and operation get, find or
// * makes its records readable wherever reads happen (get, find, REST GET,
// references). find pushes the grants into the store query (Read.Filter),
// so pages are exact. Writes still follow the owner rule alone: write
// grants, fields, membersSource and anonymous reads are not enforced yet.
//
// # Where grants come from
//
// Cache keeps each instance's grants in memory, read from the store at
// most once a second per instance (so processes sharing a MongoDB agree
// within a second) and at once after this process writes an AccessRight
// (Forget).
package access
