// Package access decides what a caller may read beyond the owner rule:
// the AccessRight records (grants) of an instance.
//
// # The model
//
// Without grants a user session reads and changes only the records its
// account created (and its own Account record); the instance token reads
// and changes everything. An AccessRight widens that (docs/accounts-and-access.md,
// "Access rights"):
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
// Rights answers, for a caller, a type and an operation, which records
// grants cover (Set). Reading: a grant with operationType Query or * and
// operation get, find or * makes its records readable wherever reads
// happen (get, find, REST GET, references). Writing: operationType
// Mutation or * with operation upsert, delete, trash, untrash, link,
// unlink or * allows that write. gql pushes a Set into the store query
// (Set.Terms), so pages are exact and bulk changes touch nothing else.
// Anonymous callers, where the instance allows anonymous requests, reach
// what grants to "anonymous" allow and nothing else; they create records
// only under an SBP upsert grant. A grant's fields list limits it: the
// other fields read as null (Set.Fields, the union over the grants that
// cover a record) and may not be set. A grant's members source
// (membersSourceType, Field, Id: a list field of Account references of one
// record, a team) adds that field's accounts as members, read at each
// request (Members), so that link and unlink there grant and revoke at
// once. The instance setting accountFields stands for one more grant that
// no record holds: an SBP read of Account to "*" with that fields list,
// joined to a user session's Set by gql (Set.Union), so every door obeys
// it as it obeys a stored grant.
//
// # Where grants come from
//
// Cache keeps each instance's grants in memory, read from the store at
// once after this process writes an AccessRight (Forget), or after the
// change feed its subscriptions read shows one changed anywhere (gql
// forgets the instance's grants before delivering the changes after it),
// and otherwise checked once a second per instance (so processes sharing a
// MongoDB agree within a second): the check reads the instance's change
// feed since the grants were read, and reads the grants again only when an
// AccessRight changed (or the feed cannot tell: more than 1,024 changes,
// trimmed, or grants read a minute ago). An instance of 10,000 grants
// costs 0.46 ms a second instead of 17-25 ms (BenchmarkCacheExpiry). A
// caller's Set over the grants that name their members is kept with the
// snapshot (until a grant's start or end passes); the grants with a
// members source are evaluated at each request and their Set joined to the
// kept one (Set.union), so one team grant does not make every request go
// through every grant (BenchmarkCacheRightsWithASourcedGrant:
// 131 µs → 1.2 µs on 10,000 grants).
package access
