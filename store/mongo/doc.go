// Package mongo is the MongoDB store.Store, on go.mongodb.org/mongo-driver/v2,
// for deployments that outgrow one machine: several cored processes share
// one database. It passes the conformance suite of store/storetest on a
// real MongoDB-wire server (FerretDB v1.24 in the tests, store/mongo/mongotest).
//
// # Layout
//
// A few collections, shared by every instance (never one per instance):
//
//	records  one document per record:
//	         _id "<instance>/<type>/<id>" (deterministic: concurrent upserts
//	         of one record meet on one document), i instance, t type,
//	         id, c created, u updated, x trashed (absent unless trashed),
//	         b createdBy, m impl (absent when empty), v write counter,
//	         f { field: value, … } (object keys escaped: escapeKey).
//	uniques  one claim per (instance, type, @unique field, value):
//	         _id "<instance>/<type>/<field>/<value key>", i, t, f, r (the
//	         record id), at (when claimed).
//	types    the declared TypeSpecs: _id "<instance>/<type>", i, t, …
//	docs     service documents: _id "<kind>/<key>", k, key, d (bytes).
//	locks    lock documents, only where the server needs them (Writes).
//	usage    one document per instance: _id the instance, r its records,
//	         s their BSON bytes, n its counters (usage.go).
//	changes  the change feed: _id "<instance>/<seq, 16 hex digits>", i,
//	         s, t time, o op, y type, r record id, c changed fields,
//	         b the record document before a DELETED (changes.go).
//	heads    one document per instance: _id the instance, h a hint of
//	         its newest change number; and one per instance whose feed
//	         a reader holds: _id "<instance>/hold", k, u (changes.go).
//
// Indexes, all led by the instance: records {i, t, id} (listing, paging
// without SORT, and the shard key), and one {i, t, f.<field>…} per
// @indices set, @unique field and reference field that Declare meets
// (shared by every instance and type with that field; at most
// Config.MaxIndexes); uniques {i, t, f}; types {i}. The _id index makes
// claims and records unique.
//
// Shard keys: records {i: 1, t: 1, id: 1}; uniques and types {i: 1, _id: 1};
// docs {_id: 1} (small). Every query of a record names its instance and
// type, so it goes to the shards holding that instance.
//
// # Queries
//
// Find resolves reference hops with bounded sub-queries
// (store.ResolveHops); a filter naming one record by id (core.id = 'x',
// as a hop to the caller's account resolves) is a read of its _id, the
// one query the FerretDB test server answers from an index. Otherwise it
// compiles the filter into BSON values
// (filter.go: never from text, no $where, $function, $expr or JavaScript),
// sorts by the query's keys and the id, and pages with a range condition
// on the sort keys and the id of the cursor record (never a skip over the
// records before it; Query.Skip alone uses the server's skip). Every record
// read is checked with arcql.Match, so the compiled filter may be a
// superset where MongoDB's semantics and ArcQL's part (ranges on lists,
// `~` words, numbers seen as text); Skip and Limit then apply while
// reading. The find carries maxTimeMS, the time left of the operation's
// deadline (Config.OpTimeout), so that the database stops a slow query
// itself (maxtime.go). Timestamps are BSON dates (milliseconds, which is what the
// service writes). A list directly inside a list is stored as
// {"%l": […]} because FerretDB v1 refuses nested arrays.
//
// # Writes
//
// No multi-document transactions or change streams are used (a standalone
// server or FerretDB lacks them). A Write is validated first (a missing
// required field or a taken unique value fails it with nothing written),
// then each op is one acknowledged write with the configured write concern
// (default majority). An upsert is one findOneAndUpdate with $set per field
// and $setOnInsert for what only a create writes, so concurrent upserts of
// one record lose no field. Unique values are claimed in the uniques
// collection before the record is written and given back after (partial
// unique indexes would do it natively, but not every MongoDB-compatible
// server has them).
//
// An upsert that sets a field its record keeps (store.Op.Keep,
// @immutable) reads the record first, fails if the op would change the
// field, and writes only if the record's write counter (v) is still the
// one read, or, when there was none, while there is none (keepFilter):
// MongoDB's own equality cannot compare the values, as an object's keys
// are stored in no fixed order.
//
// An upsert whose id the caller has just generated (store.Op.New: the
// GraphQL create of a record without core.id) is one InsertOne of the
// whole document instead: the _id index makes an insert atomic on every
// server, and no other writer can know the id yet. (It can learn it from
// a read once the insert is in: a writer in another process that updates
// the record before the create's change is in may see its own change
// numbered first. On MongoDB proper that holds for any two processes'
// writes of one record, which no lock document orders there.)
//
// What a Write's ops change in the instance's usage is queued when they
// have applied, and the Write returns without waiting for it: a flusher
// goroutine per instance and process writes everything queued with one
// $inc while anything is (usage.go). A process counts what it has queued
// in what it reads, so it reads its own Writes at once; another
// process's count a round trip or so after they returned. A quota is
// checked before the first op, from the usage and the records the ops
// touch: writers of one instance that run at once may together pass it
// by what their batches add, and those of other processes also by what
// their flushers have yet to write (usage.go).
//
// Lock documents. MongoDB applies an update to one document atomically,
// and there the write path takes none: a keyed mutex serialises the
// writes of one record within a process, and nothing else waits. FerretDB
// (v1) does not: its update reads the document and rewrites the whole of
// it (an UPDATE naming only the _id), so two concurrent $set of different
// fields of one record can lose one. When the server says it is FerretDB
// (Config.RecordLocks), two lock documents remain, each for that reason:
// one per write of an existing record (an update, delete, trash or edit,
// and an upsert of an id the caller chose; lock.go), and one per flush of
// an instance's usage, taken by its flusher for each $inc, on no
// Write's path (usage.go). A create of a new id takes none.
//
// # Change feed
//
// No change streams (FerretDB, the test server, has none; a standalone
// MongoDB neither): the feed is a collection, changes, keyed by
// instance and number in the _id, so every read of it is a range or a
// point of the _id index. An op's change is appended when the op has
// applied, before its record lock is released (one record's changes keep
// its write order wherever its lock holds), and the op's Write waits
// until it is in. The changes of an instance's concurrent writers in a
// process queue, and one of them at a time inserts all that are queued,
// numbered after the newest, with one ordered InsertMany (a group commit,
// as for usage). The insert is what takes the numbers, and the _id index
// lets only one process take each, so numbers have no gaps and a reader
// never sees n+1 before n: an ordered insert stops at a number another
// process took, keeping the ones before it, and the rest are numbered
// again after the newest. The newest number written by other processes is
// read from a hint in the heads collection, not from the feed (a scan of
// it on FerretDB), and a process that met another's numbers lately, or
// that another process stamped the heads document for having met its
// numbers, reads it too before each flush, so that it cannot take every
// number before the other process's read returns; a process alone with
// an instance reads nothing before it inserts (changes.go).
//
// Wait: a write of this process wakes its waiters at once. For writes of
// other processes, one poller goroutine per Store asks every
// Config.PollInterval (50 ms; at most 100 ms), and only while someone
// waits, ONE query: the _ids of the next change of every instance with
// waiters (an $in of primary keys, "<instance>/<after+1>"), waking those
// that have it. The polling cost is one query per interval per process,
// growing with the instances that have waiters there, not with idle
// instances nor with the database's size; cross-process delivery takes
// at most an interval plus a query.
//
// Retention (Config.Retention) is trimmed after the flush whose insert
// crosses a multiple of Retention.TrimEvery: a deleteMany of the oldest
// _ids up to the newest Count, stopping before the first change younger
// than Age and at the instance's store.Hold, so the feed always loses a
// prefix and ErrHistoryGone is read from the numbers. Without transactions, a Write failing half way keeps
// the changes of the ops that applied, and a process dying between an op
// and its insert loses that change.
//
// # Errors
//
// A taken unique value is a *store.FieldError wrapping store.ErrUnique
// naming the field and value; an unreachable server, a network failure or
// an operation past Config.OpTimeout is store.ErrUnavailable. The driver
// reconnects by itself, so the store serves again when the database is
// back; Ping answers /readyz.
package mongo
