package mongo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.uber.org/zap"

	"github.com/corehq/core/store"
)

// Usage (store.Usage) is one document per instance in the usage
// collection:
//
//	_id  the instance id
//	r    its records, live and trashed
//	s    their size: the sum of the BSON sizes of its record documents
//	     (what MongoDB stores and $bsonSize reports; indexes, claims and
//	     declared types are not counted)
//	n    { counter name (escaped): value } (AddCounters)
//
// Every Write adds what it changed when its ops have applied (each op
// learns the size of its record before from the document findOneAndUpdate
// or findOneAndDelete returns, and computes the size after: upsertedDoc
// and its siblings) to the instance's queue in this process, and returns
// without waiting for the server: a flusher goroutine per instance, while
// anything is queued, takes all of it and writes it with one $inc
// (addUsage, flushUsage). So the usage document costs no round trip on
// any Write's path (on FerretDB three: the usage lock, the $inc, the
// unlock), and N concurrent writers cost one $inc per flush. What a
// process has queued counts in what it reads (usageNow, for Usage and
// each quota check), so a process reads its own Writes at once; another
// process's count them once its flusher has written them, a round trip
// or so after they returned. Any number of processes keep the figures
// exact together, $inc being atomic: on MongoDB no lock is taken. An $inc
// that fails (the database away) is tried again after a pause, with what
// was queued meanwhile; Close writes what is queued once more.
//
// FerretDB (v1) applies an update by reading the document and writing
// the whole of it back, two steps whose UPDATE names only the _id (so a
// filter on the old value does not make it a compare-and-swap either):
// two processes' $inc of one usage document can lose one. There, and
// only there, the updates of a usage document are serialised across
// processes with a lock document (lockUsage), which the flusher takes
// once per flush and storeCount and AddCounters take too. The
// alternative, insert-only delta documents, would make every read of
// usage (each quota check) a sum over them. What is not covered: a
// process that dies between its record writes and the $inc leaves them
// uncounted (there are no transactions to tie them), and so does one
// whose database stays away past its Close.
//
// An instance stored before usage was kept has no r: its records are
// counted once, by a scan, at its first Declare or Write in a process
// (ensureUsage), and stored unless a concurrent process stored its count
// first. A record written by another process during that scan may be
// counted twice or missed, once, at the upgrade.
const (
	uRecords  = "r"
	uBytes    = "s"
	uCounters = "n"
)

// usageDoc is a usage document as read.
type usageDoc struct {
	ID       string           `bson:"_id"` // empty when the instance has no usage document
	Records  *int64           `bson:"r"`
	Bytes    int64            `bson:"s"`
	Counters map[string]int64 `bson:"n"`
}

// Usage returns the instance's usage (store.Store).
func (s *Store) Usage(ctx context.Context, inst string) (store.Usage, error) {
	if err := checkName("instance", inst); err != nil {
		return store.Usage{}, err
	}
	d, err := s.usageNow(ctx, inst)
	if err != nil {
		return store.Usage{}, err
	}
	u := store.Usage{StorageBytes: d.Bytes}
	if d.Records == nil {
		// Not counted yet: count, without storing (Declare or Write will).
		if u, err = s.countUsage(ctx, inst); err != nil {
			return store.Usage{}, err
		}
	} else {
		u.Records = *d.Records
	}
	for k, v := range d.Counters {
		if u.Counters == nil {
			u.Counters = map[string]int64{}
		}
		u.Counters[unescapeKey(k)] = v
	}
	return u, nil
}

// readUsage reads an instance's usage document; a missing one reads as
// not counted, without counters.
func (s *Store) readUsage(ctx context.Context, inst string) (usageDoc, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	var d usageDoc
	err := s.usage.FindOne(octx, bson.D{{Key: "_id", Value: inst}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return usageDoc{}, nil
	}
	if err != nil {
		return usageDoc{}, s.fail(ctx, "reading usage", err)
	}
	return d, nil
}

// AddCounters adds to instances' counters (store.Store): one bulk write
// of an $inc per instance, then, for counters a negative delta may have
// brought to 0, an $unset that applies only where the value is 0 still.
// Where usage documents need locks, each instance's updates run under
// its lock instead.
func (s *Store) AddCounters(ctx context.Context, adds map[string]map[string]int64) error {
	type updates struct{ inc, unsets []mongo.WriteModel }
	byInst := map[string]*updates{}
	for inst, add := range adds {
		if err := checkName("instance", inst); err != nil {
			return err
		}
		if len(add) == 0 {
			continue
		}
		u := &updates{}
		inc := bson.D{}
		for name, d := range add {
			if name == "" {
				return fmt.Errorf("mongo: instance %s: a counter without a name", inst)
			}
			path := uCounters + "." + escapeKey(name)
			inc = append(inc, bson.E{Key: path, Value: d})
			if d < 0 {
				u.unsets = append(u.unsets, mongo.NewUpdateOneModel().
					SetFilter(bson.D{{Key: "_id", Value: inst}, {Key: path, Value: int64(0)}}).
					SetUpdate(bson.D{{Key: "$unset", Value: bson.D{{Key: path, Value: ""}}}}))
			}
		}
		u.inc = []mongo.WriteModel{mongo.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: inst}}).
			SetUpdate(bson.D{{Key: "$inc", Value: inc}}).
			SetUpsert(true)}
		byInst[inst] = u
	}
	bulk := func(models []mongo.WriteModel) error {
		if len(models) == 0 {
			return nil
		}
		octx, cancel := s.op(ctx)
		defer cancel()
		_, err := s.usage.BulkWrite(octx, models)
		return s.fail(ctx, "adding to counters", err)
	}
	if s.lockWrites {
		for inst, u := range byInst {
			unlock, err := s.lockUsage(ctx, inst)
			if err != nil {
				return err
			}
			err = bulk(append(u.inc, u.unsets...))
			unlock()
			if err != nil {
				return err
			}
		}
		return nil
	}
	var incs, unsets []mongo.WriteModel
	for _, u := range byInst {
		incs, unsets = append(incs, u.inc...), append(unsets, u.unsets...)
	}
	if err := bulk(incs); err != nil {
		return err
	}
	return bulk(unsets)
}

// lockUsage serialises the updates of an instance's usage document where
// the server needs it (FerretDB, see above; lock.go): a flush of the
// Writes' deltas (addUsage), storeCount and AddCounters. The key is no
// record's, whose keys all have a type between their slashes.
func (s *Store) lockUsage(ctx context.Context, inst string) (func(), error) {
	if !s.lockWrites {
		return func() {}, nil
	}
	return s.lockRecord(ctx, inst+"//usage")
}

// ensureUsage makes sure the instance's records are counted (once per
// process it asks the server).
func (s *Store) ensureUsage(ctx context.Context, inst string) error {
	s.mu.RLock()
	done := s.counted[inst]
	s.mu.RUnlock()
	if done {
		return nil
	}
	d, err := s.readUsage(ctx, inst)
	if err != nil {
		return err
	}
	if d.Records != nil {
		s.markCounted(inst)
		return nil
	}
	u, err := s.countUsage(ctx, inst)
	if err != nil {
		return err
	}
	return s.storeCount(ctx, inst, u)
}

// storeCount stores the count of an instance's records, unless a count is
// stored already, and notes that the instance is counted.
func (s *Store) storeCount(ctx context.Context, inst string, u store.Usage) error {
	unlock, err := s.lockUsage(ctx, inst)
	if err != nil {
		return err
	}
	octx, cancel := s.op(ctx)
	_, err = s.usage.UpdateOne(octx,
		bson.D{{Key: "_id", Value: inst}, {Key: uRecords, Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: uRecords, Value: u.Records}, {Key: uBytes, Value: u.StorageBytes}}}},
		options.UpdateOne().SetUpsert(true))
	cancel()
	unlock()
	// A duplicate key: another process stored its count first.
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return s.fail(ctx, "storing usage", err)
	}
	s.markCounted(inst)
	return nil
}

func (s *Store) markCounted(inst string) {
	s.mu.Lock()
	s.counted[inst] = true
	s.mu.Unlock()
}

// countUsage counts an instance's records and their size: one scan.
func (s *Store) countUsage(ctx context.Context, inst string) (store.Usage, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.records.Find(octx, bson.D{{Key: fInst, Value: inst}})
	if err != nil {
		return store.Usage{}, s.fail(ctx, "counting usage", err)
	}
	defer cur.Close(context.WithoutCancel(octx))
	var u store.Usage
	for cur.Next(octx) {
		u.Records++
		u.StorageBytes += int64(len(cur.Current))
	}
	if err := cur.Err(); err != nil {
		return store.Usage{}, s.fail(ctx, "counting usage", err)
	}
	return u, nil
}

// usageDelta is what Writes added to an instance's records and bytes.
type usageDelta struct{ records, bytes int64 }

func (d usageDelta) plus(e usageDelta) usageDelta {
	return usageDelta{d.records + e.records, d.bytes + e.bytes}
}

// usageQueue is what this process's Writes of one instance added to its
// usage that the server has not acknowledged yet (addUsage): the deltas
// no flush has taken (open) and those of the flush under way (inflight).
// At most one flusher goroutine per instance runs; it takes everything
// open at each turn, so the Writes that land during one $inc share the
// next.
type usageQueue struct {
	mu       sync.Mutex
	open     usageDelta
	inflight usageDelta
	idle     chan struct{} // closed when the flusher ends; nil when none runs
	started  uint64        // flushes begun
	done     chan struct{} // closed when the flush under way ends; nil when none is
}

// addUsage adds what a Write changed to the instance's usage without
// waiting for the server: the instance's flusher writes it with the
// next $inc (flushUsage), and until then this process counts it in what
// it reads (usageNow).
func (s *Store) addUsage(inst string, d store.Usage) {
	if d.Records == 0 && d.StorageBytes == 0 {
		return
	}
	q := &s.batchesOf(inst).usage
	q.mu.Lock()
	defer q.mu.Unlock()
	q.open = q.open.plus(usageDelta{d.Records, d.StorageBytes})
	if q.idle != nil {
		return // the flusher runs and will take it
	}
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.flushers.Add(1)
	}
	s.mu.Unlock()
	if closing {
		return // Close has flushed for the last time: the store is gone
	}
	q.idle = make(chan struct{})
	go s.flushUsage(inst, q)
}

// flushUsage is an instance's flusher: it writes what is open with one
// $inc (incUsage) until nothing is. When the $inc fails (the database is
// away), the deltas go back to the open ones and the flusher tries again
// after a pause that grows to usageRetryMax; once the store is closing,
// it tries no more after a failure (Close), and those deltas are lost, as
// a process that dies loses the ones it has not written.
func (s *Store) flushUsage(inst string, q *usageQueue) {
	defer s.flushers.Done()
	pause := usageRetryMin
	for {
		q.mu.Lock()
		d := q.open
		if d == (usageDelta{}) {
			close(q.idle)
			q.idle = nil
			q.mu.Unlock()
			return
		}
		q.open, q.inflight = usageDelta{}, d
		q.started++
		done := make(chan struct{})
		q.done = done
		q.mu.Unlock()

		err := s.incUsage(s.flushCtx, inst, d)

		q.mu.Lock()
		q.inflight, q.done = usageDelta{}, nil
		if err != nil {
			q.open = q.open.plus(d)
		}
		close(done)
		q.mu.Unlock()
		if err == nil {
			pause = usageRetryMin
			continue
		}
		if pause == usageRetryMin {
			s.log.Warn("writing an instance's usage failed; trying again", zap.String("instance", inst), zap.Error(err))
		}
		select {
		case <-s.stop:
			q.mu.Lock()
			lost := q.open
			close(q.idle)
			q.idle = nil
			q.mu.Unlock()
			s.log.Error("the store closed before the server took an instance's usage: the instance's usage counts are short by these",
				zap.String("instance", inst), zap.Int64("records", lost.records), zap.Int64("storageBytes", lost.bytes), zap.Error(err))
			return
		case <-time.After(pause):
			pause = min(2*pause, usageRetryMax)
		}
	}
}

// The pauses of a flusher whose $inc failed (flushUsage).
const (
	usageRetryMin = 100 * time.Millisecond
	usageRetryMax = 5 * time.Second
)

// usageNow reads the instance's usage document and adds what this
// process's Writes added that the server has not acknowledged (addUsage),
// so that a process reads its own Writes. A flush under way is waited
// for: until it is acknowledged, the document may or may not hold it.
// When a flush begins while the document is read, the read is done again.
// After three tries (this process's Writes of the instance keep its
// flusher busy), the flush under way is not waited for and counts as not
// yet written: the figures may then hold one flush's worth twice, as a
// Write that lands during a read may be in either.
func (s *Store) usageNow(ctx context.Context, inst string) (usageDoc, error) {
	q := &s.batchesOf(inst).usage
	for try := 0; ; try++ {
		q.mu.Lock()
		done, started, pending := q.done, q.started, q.open
		if try >= 3 {
			done, pending = nil, pending.plus(q.inflight)
		}
		q.mu.Unlock()
		if done != nil {
			if err := waitClosed(ctx, done); err != nil {
				return usageDoc{}, err
			}
			continue
		}
		d, err := s.readUsage(ctx, inst)
		if err != nil {
			return d, err
		}
		q.mu.Lock()
		again := q.started != started
		q.mu.Unlock()
		if again && try < 3 {
			continue
		}
		if d.Records != nil {
			r := *d.Records + pending.records
			d.Records = &r
		}
		d.Bytes += pending.bytes
		return d, nil
	}
}

// settleUsage waits until the instance's flusher, if one runs, has
// written everything queued and ended, or ctx ends (for the tests).
func (s *Store) settleUsage(ctx context.Context, inst string) error {
	q := &s.batchesOf(inst).usage
	q.mu.Lock()
	idle := q.idle
	q.mu.Unlock()
	return waitClosed(ctx, idle)
}

// dropUsageQueue forgets the deltas no flush has taken and waits for the
// flush under way, if any, to end (DropInstance: the records they counted
// are gone).
func (s *Store) dropUsageQueue(ctx context.Context, inst string) error {
	q := &s.batchesOf(inst).usage
	q.mu.Lock()
	q.open = usageDelta{}
	done := q.done
	q.mu.Unlock()
	return waitClosed(ctx, done)
}

// waitClosed waits until ch is closed (at once when it is nil) or ctx
// ends.
func waitClosed(ctx context.Context, ch <-chan struct{}) error {
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// incUsage adds d to the instance's usage document: one $inc, under the
// usage lock where the server needs it (lockUsage). Deltas that cancel
// out cost nothing.
func (s *Store) incUsage(ctx context.Context, inst string, d usageDelta) error {
	if d == (usageDelta{}) {
		return nil
	}
	unlock, err := s.lockUsage(ctx, inst)
	if err != nil {
		return err
	}
	defer unlock()
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err = s.usage.UpdateOne(octx, bson.D{{Key: "_id", Value: inst}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: uRecords, Value: d.records}, {Key: uBytes, Value: d.bytes}}}},
		options.UpdateOne().SetUpsert(true))
	return s.fail(ctx, "counting usage", err)
}

// checkQuota refuses a Write that would take the instance past quota,
// before any op applies: it reads the records the ops touch (one query)
// and the usage (usageNow: with what this process has queued), and
// follows the ops' effect on sizes through the batch as apply will.
// Writers of the same instance that run at once, in this process or
// others, each check against the usage before the others' writes land,
// so together they may pass the quota by at most what their batches add,
// and by what other processes' flushers have yet to write; the embedded
// store, checking inside its transaction, never does.
func (s *Store) checkQuota(ctx context.Context, inst string, ops []store.Op, quota store.Quota) error {
	keys := make([]string, 0, len(ops))
	for i := range ops {
		keys = append(keys, recordKey(inst, ops[i].Type, ops[i].ID))
	}
	docs := map[string]bson.M{}
	sizes := map[string]int64{}
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.records.Find(octx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}})
	if err != nil {
		return s.fail(ctx, "reading records for a quota", err)
	}
	for cur.Next(octx) {
		var doc bson.M
		if err := cur.Decode(&doc); err != nil {
			cur.Close(context.WithoutCancel(octx))
			return fmt.Errorf("mongo: decoding a record: %w", err)
		}
		key, _ := doc["_id"].(string)
		docs[key], sizes[key] = doc, int64(len(cur.Current))
	}
	err = cur.Err()
	cur.Close(context.WithoutCancel(octx))
	if err != nil {
		return s.fail(ctx, "reading records for a quota", err)
	}
	d, err := s.usageNow(ctx, inst)
	if err != nil {
		return err
	}
	before := store.Usage{StorageBytes: d.Bytes}
	if d.Records != nil {
		before.Records = *d.Records
	}
	after := before
	for i, key := range keys {
		op := &ops[i]
		old := docs[key]
		var next bson.M
		switch op.Kind {
		case store.OpUpsert:
			next = upsertedDoc(inst, key, old, op)
		case store.OpDelete:
			if old != nil {
				after.Records--
				after.StorageBytes -= sizes[key]
				delete(docs, key)
			}
			continue
		case store.OpTrash, store.OpUntrash:
			if old == nil || (old[fTrashed] != nil) == (op.Kind == store.OpTrash) {
				continue
			}
			next = trashedDoc(old, op)
		default:
			if old == nil {
				continue
			}
			rec, err := decodeRecord(old)
			if err != nil {
				return err
			}
			set, err := op.Edit(rec.Fields)
			if err != nil {
				return err
			}
			if len(set) == 0 {
				continue
			}
			next = editedDoc(old, op, set)
		}
		size, err := docSize(next)
		if err != nil {
			return err
		}
		if old == nil {
			after.Records++
		}
		after.StorageBytes += size - sizes[key]
		docs[key], sizes[key] = next, size
	}
	return quota.Check(ops, before, after)
}

// docSize is the BSON size of a record document.
func docSize(doc bson.M) (int64, error) {
	b, err := bson.Marshal(doc)
	if err != nil {
		return 0, fmt.Errorf("mongo: measuring a record: %w", err)
	}
	return int64(len(b)), nil
}

// The documents a write leaves, built as the server builds them from
// the update, so that their size is known without reading them back:
// the same elements make the same BSON size, whatever their order.

// upsertedDoc is the record document an upsert leaves: old (nil: a
// create) with $setOnInsert, $set and $inc applied as upsert sends them.
func upsertedDoc(inst, key string, old bson.M, op *store.Op) bson.M {
	var doc bson.M
	if old == nil {
		doc = bson.M{"_id": key, fInst: inst, fType: op.Type, fID: op.ID, fCreated: dateOf(op.Now)}
		if op.CreatedBy != "" {
			doc[fCreatedBy] = op.CreatedBy
		}
		if op.Impl != "" {
			doc[fImpl] = op.Impl
		}
	} else {
		doc = maps.Clone(old)
	}
	f := fieldsOf(doc)
	for k, v := range op.Set {
		f[escapeKey(k)] = mustEncode(k, v)
	}
	doc[fFields] = f
	doc[fUpdated] = dateOf(op.Now)
	bump(doc)
	return doc
}

// trashedDoc is the record document a trash (x set) or an untrash (x
// removed) leaves.
func trashedDoc(old bson.M, op *store.Op) bson.M {
	doc := maps.Clone(old)
	if op.Kind == store.OpTrash {
		doc[fTrashed] = dateOf(op.Now)
	} else {
		delete(doc, fTrashed)
	}
	bump(doc)
	return doc
}

// editedDoc is the record document an edit op (store.Op.Edit) leaves.
func editedDoc(old bson.M, op *store.Op, set map[string]any) bson.M {
	doc := maps.Clone(old)
	f := fieldsOf(doc)
	for k, v := range set {
		f[escapeKey(k)] = mustEncode(k, v)
	}
	doc[fFields] = f
	doc[fUpdated] = dateOf(op.Now)
	bump(doc)
	return doc
}

// fieldsOf copies a record document's fields object (decoded as a map
// of either type).
func fieldsOf(doc bson.M) bson.M {
	f := bson.M{}
	switch m := doc[fFields].(type) {
	case bson.M:
		maps.Copy(f, m)
	case map[string]any:
		maps.Copy(f, m)
	}
	return f
}

// bump applies $inc {v: int64(1)}: an int64 whatever v held (MongoDB
// widens an int32 incremented by an int64).
func bump(doc bson.M) {
	var v int64
	switch n := doc[fVersion].(type) {
	case int64:
		v = n
	case int32:
		v = int64(n)
	}
	doc[fVersion] = v + 1
}
