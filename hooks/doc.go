// Package hooks delivers the changes of an instance's records to other
// systems: the instance's built-in EventHook records name an HTTP
// endpoint, the record types and operations it wants and an optional
// ArcQL filter, and the Service posts each matching change of the
// instance's change feed (store.Changes) to it, signed per the Standard
// Webhooks specification (sign.go).
//
// The contract:
//   - At least once, in order: each hook has a cursor (the Seq of the
//     last change it is done with) kept in the store (state.go), so a
//     process killed at any moment loses nothing; it may post again
//     what it posted after the cursor was last written (webhook-id is the
//     same each time, for the receiver to drop the repeat). The changes
//     of one record are posted one at a time in feed order, each once the
//     one before it succeeded, so they arrive in the order they were
//     made; up to Config.Parallel records' changes are posted at once.
//   - A failed post (no answer within Config.Timeout, a status other than
//     2xx, a refused destination) is tried again after an exponential
//     backoff (Config.BackoffMin doubling up to BackoffMax) until the
//     hook has failed for Config.RetryFor (24 hours by default); then
//     the service sets the hook's enabled to false and its lastError.
//     While a hook retries, its later changes wait (those of other
//     records posted in the same page are posted again: at least once).
//   - The feed keeps a change an hour and at least the newest 10,000
//     (store.Retention), and, while an instance has enabled hooks, every
//     change after the cursor of the slowest of them, for as long as the
//     hooks may retry (RetryFor) and up to store.MaxHeld changes
//     (worker.hold, store.HoldChanges). A hook that falls further behind
//     than that (more changes while its endpoint is down) loses the
//     trimmed changes: its delivery log says how many, and it goes on
//     from the oldest change still kept.
//   - Destinations: only public addresses (internal/netguard) unless
//     Config.AllowPrivate (cored serve --hook-allow-private); redirects
//     are not followed; an answer is read up to Config.MaxResponse bytes
//     and its first bytes kept in the delivery log.
//   - Several processes on one MongoDB: the hooks of an instance are
//     delivered by the process that holds the instance's lease (lease.go),
//     a document created with CreateDoc (one process wins) and renewed
//     while it delivers; a process that stops renewing loses it to
//     another after Config.Lease, and never posts when its lease may
//     have run out. On the embedded store one process is the only one.
//
// The secret of a hook (whsec_ and base64) is kept sealed by the key ring
// (SealSecret, OpenSecret) and never returned: the GraphQL field is
// write-only (schema: hidden). gql checks and seals what a client writes
// (Check*, Noted); the Service reads the records from the store.
package hooks
