// Package bolt is the embedded store.Store: one bbolt file in the data
// directory, no server. It passes the conformance suite of store/storetest
// and applies every Write atomically.
//
// # Layout
//
// Bucket paths, then keys:
//
//	meta                      "version" → layout version; "gen" → the last
//	                          generation number handed out by Declare
//	docs/<kind>               <key> → document bytes
//	inst/<instance>           "gen" → the instance's generation (its
//	                          declared state changes exactly when this does)
//	inst/<instance>/spec      <type> → JSON of the declared TypeSpec and its
//	                          index definitions
//	inst/<instance>/rec/<type>           <id> → encoded record (codec.go)
//	inst/<instance>/idx/<type>/<index>   <entry key> → empty; 0x00 → flags
//	inst/<instance>/count     <type> → record count, big-endian uint64
//	inst/<instance>           "usage" → the instance's records and their
//	                          encoded bytes, kept by every write (usage.go)
//	inst/<instance>/counters  <name> → a counter of the service (AddCounters)
//	inst/<instance>/changes   <seq> → a change of the feed (changes.go)
//
// The instance id is the first element of every record and index path, so
// no key of one instance is reachable from another, and DropInstance is one
// DeleteBucket. Ids are ULIDs, so a type's record bucket is in creation
// order, which is the order of a query without SORT.
//
// # Indexes
//
// Each @indices set, each @unique field and each reference field of a
// declared type is an index, named by its fields joined with ",". An entry
// key is the order-preserving encoding of the record's values of those
// fields followed by its id (keys.go): numbers as sortable float64 bytes,
// strings escaped, booleans, timestamps and null as tags, ranked as
// arcql.CompareValues ranks them. A list value gives one entry per element;
// a missing, null or empty value the null entry, so that every record is in
// every index of its type and an index scan can also serve sorting. Index
// entries change in the same transaction as the record. A unique index
// refuses a second record with the same non-null value (store.ErrUnique).
//
// Declare builds new indexes from the stored records and drops undeclared
// ones; the declared state is cached in memory and checked against the
// instance's generation number in each transaction, so a Declare is seen by
// the next transaction of every goroutine.
//
// # Queries
//
// Find resolves reference hops with bounded sub-queries (store.ResolveHops),
// then plans: direct gets for core.id, an index for equality, IN, ranges and
// prefixes, an index walk for the first SORT key, or a scan of the type's
// bucket that stops at Limit (plan.go). Every candidate is checked with
// arcql.Match, so plans only ever narrow the records read, never the
// meaning; trashed records are skipped unless asked for.
//
// # Writes
//
// bbolt allows one writer at a time. A synced commit writes its pages
// and meta page to the journal (core.db-journal) in one write and syncs
// it, then writes them in place unsynced; opening replays the journal
// (journal.go). Once in earnest use, the journal is written out to its
// size ahead of the records, so that their syncs do not also allocate
// blocks (journal_fill.go). Writes go to one committer goroutine that
// commits, in one transaction, every write that queued up while the
// previous one committed (commit.go): a lone write commits at once, and
// under load one commit serves many writes; a commit that saw several writers waits
// briefly (at most as long as the last one took, 1 ms at most) for three
// quarters of them. A write that fails is taken out and the others run again, so one
// bad Write never fails another, and each Write stays atomic. A Write's
// quota is checked inside its transaction, against the usage the same
// transaction keeps, so a quota is never passed, however many write at
// once.
//
// # Change feed
//
// A Write appends one store.Change per op that changed something to the
// instance's changes bucket, in its own transaction (changes.go): the
// number is the bucket's last key plus one, and transactions commit one
// at a time, so Seq follows the commit order with no gap, and a write
// that fails (taken out of the group commit) appends nothing. Once the
// transaction has committed, Write wakes the callers of Wait on that
// instance through a channel (store.Waiters): one process, no polling.
// Trimming (Config.Retention: the last hour and at least the newest
// 10,000 by default) runs inside a write whose numbers cross a multiple
// of Retention.TrimEvery, deleting the oldest keys the retention lets go;
// it costs a seek per TrimEvery changes, not a scan per write. A reader
// whose next change was trimmed learns it from the numbers (the first key
// after its cursor is not the next one): store.ErrHistoryGone.
package bolt
