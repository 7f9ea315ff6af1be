package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
)

// The change feed (store.Change) is the changes collection, one document
// per change:
//
//	_id  "<instance>/<seq as 16 hex digits>": the key is the number, so
//	     ranges and the newest change of an instance are reads of the
//	     _id index, and inserting it is what allocates the number
//	i    instance, s seq, t time, o op, y type, r record id,
//	c    changed fields, b the record document before a DELETED
//
// Allocation. An op's change is appended after the op applied, while the
// record's lock is still held, and the op's Write waits until it is in:
// so one record's changes are in the order of its writes wherever its
// lock covers them (across processes only where lock documents are used;
// doc.go, "Writes"). Within a process the changes of an instance queue,
// and one of their writers at a time takes all that are queued, numbers
// them consecutively after the newest number it knows of and inserts them
// with ordered InsertMany calls (insertChanges; group.go), so N writers
// of an instance cost one insert per flush rather than one round trip
// each, one after the other. Only an insert that succeeds takes a number,
// and the _id index refuses a second taker. An ordered insert puts its
// documents in one after the other and stops at the first that fails:
// when another process took that one's number, the ones before it are in
// and keep their numbers, and the rest are numbered again after the
// newest and retried. So the numbers have no gaps, and a reader never
// sees n+1 without n: n+1 is inserted only once n is in, by this insert
// or by another whose n was read back. (FerretDB keeps to this order only
// within one of its own insert batches: maxChangeBatch.) Without
// transactions, a Write failing half way keeps the changes of the ops
// that applied (they did change the records), and a process dying
// between an op and its insert loses that one change. After DropInstance
// in another process, a process that still writes the instance numbers
// on from the newest it knew (a reader from 0 then meets ErrHistoryGone
// and starts afresh), which is harmless: cursors never go backwards.
//
// The newest number. A process knows the numbers it inserted; the others'
// it reads from the heads collection, one small document per instance
// (_id the instance, h a number), which a flush raises ($max) to the
// newest it inserted once that is in. h is a hint: never past the feed
// (it is raised only after the insert, and dropped with the feed), it may
// lag (a raise comes after its insert, and FerretDB may lose one of two
// concurrent raises), which costs another try: the number that turned
// out taken is known to be in, so the next try goes past the hint once
// the hint has reached it (the other process raises it right after its
// insert: headAfterLoss waits a moment for that rather than trying the
// numbers of the other's batch one by one), and every eighth loss in a
// row reads the feed itself (LastChange). The hint
// exists because reading the newest change from the feed is a scan of the
// whole changes collection on FerretDB (v1 over SQLite: a second per read
// at 10,000 changes), while the hint's collection holds one document per
// instance.
//
// Fairness. A process that loses a number needs a read before its next
// try; one whose writers keep it flushing back to back would, inserting
// after the newest it knows without reading, take every number before
// that read returns, and the other would lose every time. So a flush
// takes care when this process met another's number of the instance
// within the last second (contendedFor): it reads the hint before
// inserting, and when the hint is still its own newest number (no other
// process inserted since its last flush) it waits a moment for the other
// to raise it (yieldTurn), which leaves the other process the same
// chance as itself: the two take turns rather than trying the same
// number at once, and each turn carries what its writers queued during
// the other's. A process that never loses
// learns of the other from the heads document: a process that loses
// stamps it (c, the time of its loss: at once, at most every
// contendedFor/4, and with each raise of the hint while the loss is
// recent, which restores a stamp that FerretDB's whole-document update
// of another raise wrote over), and every raise of the hint, which
// returns the document, reads the stamp and takes care for contendedFor
// after it. A flush of an instance no other
// process writes does neither, back to back or not: it numbers after
// what it knows, and its raise follows with no caller waiting for it.
//
// Waiting. Within a process, an insert wakes the instance's waiters at
// once. Across processes (no change streams on FerretDB, the test server),
// one poller per Store runs every Config.PollInterval (50 ms), but only
// while some Wait is waiting: it asks, in ONE query, for the _id of the
// next change of each instance with waiters ("<instance>/<after+1>", an
// $in of primary keys), and wakes the instances that have it. Its cost is
// one query per interval per process, as large as the number of instances
// with waiters in that process: idle instances without waiters cost
// nothing, and neither do the changes themselves.
//
// Retention (Config.Retention) is trimmed after the flush whose insert
// crosses a multiple of Retention.TrimEvery, by its after work (no
// caller waits for it): it deletes the oldest
// changes up to the newest Count, stopping at the first one younger than
// Age and at the instance's store.Hold (a document of its own in heads,
// holdKey), so the feed always loses a prefix. Unlike the embedded store
// it does not bound how many one trim deletes (Retention.MaxTrim): the
// deleteMany after a released hold is one operation of the server's,
// which holds none of it in cored's memory, and finding the oldest change
// to bound it by would be a scan of the feed on FerretDB. A failed trim
// is tried again at the next trim point.
const collChanges = "changes"

// changeDoc is a change document as stored.
type changeDoc struct {
	ID      string        `bson:"_id"`
	Inst    string        `bson:"i"`
	Seq     int64         `bson:"s"`
	Time    bson.DateTime `bson:"t"`
	Op      string        `bson:"o"`
	Type    string        `bson:"y"`
	Record  string        `bson:"r"`
	Changed []string      `bson:"c,omitempty"`
	Before  bson.M        `bson:"b,omitempty"`
}

// changeKey is the _id of an instance's change seq.
func changeKey(inst string, seq uint64) string { return fmt.Sprintf("%s/%016x", inst, seq) }

// changeRange is the _id filter of an instance's changes with seq in
// (after, ∞); instance ids hold no '/', and '0' follows it.
func changeRange(inst string, after uint64) bson.D {
	return bson.D{{Key: "$gt", Value: changeKey(inst, after)}, {Key: "$lt", Value: inst + "0"}}
}

// maxChangeBatch bounds the changes one insert carries. FerretDB (v1)
// inserts in batches of its own (100 documents unless configured
// otherwise) and, after an ordered insert failed in one of them, goes on
// with the next: a change could then get in after one that did not get
// its number. Within one of its batches the order holds.
const maxChangeBatch = 50

// pendingChange is a change in an instance's queue (appendChange), and
// the outcome of its insert.
type pendingChange struct {
	doc changeDoc
	err error
}

// changeBatch is the queue one flush of an instance's changes inserts
// (insertChanges), and what its after work needs: the newest number it
// inserted (0 when none) and the number at which a trim fell due (0 when
// none).
type changeBatch struct {
	queue          []*pendingChange
	newest, trimAt uint64
}

// appendChange inserts the change of an applied op (see above) and
// returns once it is in (acknowledged), having woken the instance's
// waiters in this process. The changes of an instance's concurrent
// Writes in this process queue, and one of their callers at a time
// inserts all that are queued (insertChanges; group.go); the raise of
// the hint, and a trim that fell due, follow with no caller waiting
// (afterChanges). The insert runs on ctx without its
// cancellation: it carries other callers' changes too.
func (s *Store) appendChange(ctx context.Context, inst string, c store.Change, before bson.M) error {
	ctx = context.WithoutCancel(ctx)
	p := &pendingChange{doc: changeDoc{Inst: inst, Time: dateOf(time.Now()), Op: string(c.Op), Type: c.Type, Record: c.ID, Changed: c.Changed, Before: before}}
	s.batchesOf(inst).changes.do(
		func(b *changeBatch) { b.queue = append(b.queue, p) },
		func(b *changeBatch) { s.insertChanges(ctx, inst, b) },
		func(b *changeBatch) { s.afterChanges(ctx, inst, b) })
	return p.err
}

// insertChanges numbers a batch's changes consecutively after the newest
// number it knows of and inserts them, in queue order, with ordered
// InsertMany calls, setting each change's err. An ordered insert stops at
// its first failure with the ones before it in: when the failure is a
// taken number (another process's change), those keep their numbers and
// the rest are numbered again after the newest (headAfterLoss) and
// retried; when it is that change's own (a document the server refuses),
// that change fails and the rest go on with its number; any other
// failure fails the rest. A change is retried at least maxRetries times
// in a row, and beyond that while the flush is within Config.OpTimeout:
// every loss is another process's change going in, so the feed is
// moving, and under two busy processes a flush may lose a number to the
// other several times running.
//
// The newest number it knows of is this process's own (heads). A careful
// flush, one of an instance where this process met another's number
// within contendedFor (or another process said it met this one's),
// reads the hint first, and gives the other process its turn when the
// hint shows that this one inserted last (yieldTurn); see "Fairness"
// above. The raise of the hint follows in the after work, as for any
// flush: the callers do not wait for it, but this process's next flush
// does (group.go), so the other reads it before this one's next insert.
func (s *Store) insertChanges(ctx context.Context, inst string, b *changeBatch) {
	careful := s.contended(inst)
	start := time.Now()
	queue := b.queue
	failRest := func(err error) {
		for _, p := range queue {
			p.err = err
		}
	}
	unlock, err := s.feedLocks.lock(ctx, inst)
	if err != nil {
		failRest(err)
		return
	}
	defer unlock()
	s.mu.RLock()
	seq, known := s.heads[inst]
	s.mu.RUnlock()
	if !known || careful {
		h, hinted, err := s.readHint(ctx, inst)
		switch {
		case err != nil:
			failRest(err)
			return
		case hinted:
			if known && careful && h == seq {
				h = s.yieldTurn(ctx, inst, h)
			}
			if known && h > seq {
				s.markContended(inst) // another process wrote
			}
			seq = max(seq, h)
		case !known:
			// No hint: a feed kept before hints were, or none yet.
			if seq, err = s.LastChange(ctx, inst); err != nil {
				failRest(err)
				return
			}
		}
	}
	for attempt := 0; len(queue) > 0; {
		n := min(len(queue), maxChangeBatch)
		docs := make([]any, n)
		for i, p := range queue[:n] {
			p.doc.Seq = int64(seq) + 1 + int64(i)
			p.doc.ID = changeKey(inst, uint64(p.doc.Seq))
			docs[i] = p.doc
		}
		octx, cancel := s.op(ctx)
		_, err := s.changes.InsertMany(octx, docs)
		cancel()
		in, failed, placed := n, mongo.WriteError{}, true
		if err != nil {
			if in, failed, placed = firstFailure(err); in >= n {
				in, placed = 0, false // not a document of this insert
			}
		}
		if in > 0 {
			prev := seq
			seq += uint64(in)
			queue = queue[in:]
			attempt = 0
			s.mu.Lock()
			s.heads[inst] = seq
			s.mu.Unlock()
			s.feed.Wake(inst)
			b.newest = seq
			if s.cfg.Retention.TrimDue(prev, seq) {
				b.trimAt = seq
			}
		}
		switch {
		case err == nil:
		case !placed:
			failRest(s.fail(ctx, "appending a change", err))
			return
		case mongo.IsDuplicateKeyError(failed):
			if attempt >= maxRetries && time.Since(start) > s.cfg.OpTimeout {
				failRest(s.fail(ctx, "appending a change", err))
				return
			}
			attempt++
			if s.markLost(inst) {
				s.stampContention(ctx, inst)
			}
			if seq, err = s.headAfterLoss(ctx, inst, seq+1, attempt); err != nil {
				failRest(err)
				return
			}
		default:
			queue[0].err = s.fail(ctx, "appending a change", failed)
			queue = queue[1:]
		}
	}
}

// headAfterLoss is the number to number after once number taken turned
// out to be another process's, at the attempt-th loss in a row: the hint
// once it has reached taken (taken is in, and the other process raises
// the hint right after the insert that took it, which may hold more of
// its numbers past taken: trying those one by one would lose to each),
// read up to hintReads times a hintPause apart, else taken itself; every
// eighth time, the newest number read from the feed itself (LastChange:
// exact, but a scan of the collection on FerretDB, where the hint is a
// read of a small one).
func (s *Store) headAfterLoss(ctx context.Context, inst string, taken uint64, attempt int) (uint64, error) {
	if attempt%8 == 0 {
		return s.LastChange(ctx, inst)
	}
	for range hintReads {
		h, _, err := s.readHint(ctx, inst)
		if err != nil || h >= taken {
			return max(h, taken), err
		}
		time.Sleep(hintPause)
	}
	return taken, nil
}

// yieldTurn is the turn a careful flush gives the other process when the
// hint shows this process's own newest number h (it inserted last, and
// no other has since): it reads the hint again, up to hintReads times a
// hintPause apart, until another process raised it, and returns the
// newest it read. Without it, two processes flushing back to back both
// read the same hint and try the same number nearly every time, and the
// loser's retry waits for the winner's raise anyway; with it they take
// turns, and each flush carries what its writers queued meanwhile. A
// failed read ends the wait (the insert that follows finds out).
func (s *Store) yieldTurn(ctx context.Context, inst string, h uint64) uint64 {
	for range hintReads {
		time.Sleep(hintPause)
		if next, _, err := s.readHint(ctx, inst); err != nil || next > h {
			return max(next, h)
		}
	}
	return h
}

// How long headAfterLoss waits for another process to raise the hint
// past a number it took, and yieldTurn for its turn: about its raise's
// round trip.
const (
	hintReads = 8
	hintPause = 250 * time.Microsecond
)

// contendedFor is how long after this process last met another's
// change number it takes care in numbering (insertChanges).
const contendedFor = time.Second

// contention is what this process knows of other processes numbering
// an instance's changes: until when it takes care, and when it last lost
// a number to one of them.
type contention struct{ until, lost time.Time }

// contended reports whether this process takes care numbering the
// instance's changes: it met another's number, or read a fresh stamp,
// within contendedFor.
func (s *Store) contended(inst string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return time.Now().Before(s.contention[inst].until)
}

// markContended notes that another process numbers the instance's
// changes too.
func (s *Store) markContended(inst string) {
	s.mu.Lock()
	c := s.contention[inst]
	c.until = time.Now().Add(contendedFor)
	s.contention[inst] = c
	s.mu.Unlock()
}

// markLost notes that this process lost a number to another now; fresh
// reports whether its last loss was more than a quarter of contendedFor
// ago (or none), when it stamps the heads document at once
// (stampContention).
func (s *Store) markLost(inst string) (fresh bool) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.contention[inst]
	fresh = now.Sub(c.lost) > contendedFor/4
	c.until, c.lost = now.Add(contendedFor), now
	s.contention[inst] = c
	return fresh
}

// lostLately returns when this process last lost a number of the
// instance, if that was within contendedFor (else the zero time).
func (s *Store) lostLately(inst string) time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if lost := s.contention[inst].lost; time.Since(lost) < contendedFor {
		return lost
	}
	return time.Time{}
}

// stampContention stamps the instance's heads document with the time this
// process lost a number to another (c), so that a process that never
// loses learns that it is not alone (raiseHint). Best effort: on FerretDB
// another process's raise may write the document back without it, and
// this process's raises stamp it again while its loss is recent.
func (s *Store) stampContention(ctx context.Context, inst string) {
	octx, cancel := s.op(ctx)
	defer cancel()
	_, _ = s.hints.UpdateOne(octx, bson.D{{Key: "_id", Value: inst}},
		bson.D{{Key: "$max", Value: bson.D{{Key: "c", Value: time.Now().UnixMilli()}}}},
		options.UpdateOne().SetUpsert(true))
}

// afterChanges is the after work of a flush of changes, best effort: it
// raises the instance's hint to the newest number the flush inserted,
// and trims the feed if a trim fell due (the next trim point tries
// again).
func (s *Store) afterChanges(ctx context.Context, inst string, b *changeBatch) {
	if b.newest > 0 {
		s.raiseHint(ctx, inst, b.newest)
	}
	if b.trimAt > 0 {
		_ = s.trimChanges(ctx, inst, b.trimAt)
	}
}

// raiseHint raises the instance's hint to newest, which is in (with this
// process's contention stamp, while its last loss is recent), and reads
// the stamp the update returns: another process that lost a number
// within contendedFor makes this one careful; best effort (a hint that
// lags costs another try).
func (s *Store) raiseHint(ctx context.Context, inst string, newest uint64) {
	octx, cancel := s.op(ctx)
	defer cancel()
	var d struct {
		C int64 `bson:"c"`
	}
	raise := bson.D{{Key: "h", Value: int64(newest)}}
	if lost := s.lostLately(inst); !lost.IsZero() {
		raise = append(raise, bson.E{Key: "c", Value: lost.UnixMilli()})
	}
	// The whole document: FerretDB (v1) refuses a projection here.
	err := s.hints.FindOneAndUpdate(octx, bson.D{{Key: "_id", Value: inst}},
		bson.D{{Key: "$max", Value: raise}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&d)
	if err == nil && time.Since(time.UnixMilli(d.C)) < contendedFor {
		s.markContended(inst)
	}
}

// readHint reads the instance's hint of its newest change number (see
// above); ok is false when it has none.
func (s *Store) readHint(ctx context.Context, inst string) (h uint64, ok bool, err error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	var d struct {
		H int64 `bson:"h"`
	}
	err = s.hints.FindOne(octx, bson.D{{Key: "_id", Value: inst}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, s.fail(ctx, "reading the newest change", err)
	}
	return uint64(d.H), true, nil
}

// firstFailure places the failure of an ordered InsertMany: how many
// documents went in before the first that failed, and that one's error.
// placed is false for a failure that names no document (the network, a
// write concern not met), after which nothing is known to be in.
func firstFailure(err error) (in int, failed mongo.WriteError, placed bool) {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return 0, mongo.WriteError{}, false
	}
	first := slices.MinFunc(bwe.WriteErrors, func(a, b mongo.BulkWriteError) int { return cmp.Compare(a.Index, b.Index) })
	return first.Index, first.WriteError, true
}

// trimChanges deletes the changes of an instance that retention lets go,
// last being the newest.
func (s *Store) trimChanges(ctx context.Context, inst string, last uint64) error {
	r := s.cfg.Retention
	if last <= uint64(r.Count) {
		return nil
	}
	cut := last - uint64(r.Count)
	octx, cancel := s.op(ctx)
	defer cancel()
	hold, err := s.readHold(octx, inst)
	if err != nil {
		return s.fail(ctx, "trimming changes", err)
	}
	if cut = min(cut, hold.Limit(last, time.Now())); cut == 0 {
		return nil
	}
	if r.Age > 0 {
		var young changeDoc
		err := s.changes.FindOne(octx, bson.D{
			{Key: "_id", Value: bson.D{{Key: "$gt", Value: changeKey(inst, 0)}, {Key: "$lte", Value: changeKey(inst, cut)}}},
			{Key: "t", Value: bson.D{{Key: "$gte", Value: dateOf(time.Now().Add(-r.Age))}}},
		}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: 1}}).SetProjection(bson.D{{Key: "s", Value: 1}})).Decode(&young)
		switch {
		case err == nil:
			if young.Seq <= 1 {
				return nil
			}
			cut = min(cut, uint64(young.Seq)-1)
		case !errors.Is(err, mongo.ErrNoDocuments):
			return s.fail(ctx, "trimming changes", err)
		}
	}
	_, err = s.changes.DeleteMany(octx, bson.D{{Key: "_id", Value: bson.D{
		{Key: "$gte", Value: inst + "/"}, {Key: "$lte", Value: changeKey(inst, cut)}}}})
	return s.fail(ctx, "trimming changes", err)
}

// holdKey is the _id of an instance's Hold in the heads collection,
// beside its hint (instance ids hold no '/'): a document of its own, as
// FerretDB (v1) rewrites the whole document on every raise of the hint
// and could write a concurrent hold over.
func holdKey(inst string) string { return inst + "/hold" }

// holdDoc is an instance's Hold as stored: k after, u until (Unix
// milliseconds).
type holdDoc struct {
	K int64 `bson:"k"`
	U int64 `bson:"u"`
}

// readHold reads the instance's Hold; none when absent.
func (s *Store) readHold(ctx context.Context, inst string) (store.Hold, error) {
	var d holdDoc
	err := s.hints.FindOne(ctx, bson.D{{Key: "_id", Value: holdKey(inst)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return store.Hold{}, nil
	}
	if err != nil {
		return store.Hold{}, err
	}
	return store.Hold{After: uint64(d.K), Until: time.UnixMilli(d.U)}, nil
}

// HoldChanges sets or releases the instance's Hold (store.Store).
func (s *Store) HoldChanges(ctx context.Context, inst string, after uint64, until time.Time) error {
	if err := checkName("instance", inst); err != nil {
		return err
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	var err error
	if until.IsZero() {
		_, err = s.hints.DeleteOne(octx, bson.D{{Key: "_id", Value: holdKey(inst)}})
	} else {
		_, err = s.hints.ReplaceOne(octx, bson.D{{Key: "_id", Value: holdKey(inst)}},
			holdDoc{K: int64(after), U: until.UnixMilli()}, options.Replace().SetUpsert(true))
	}
	return s.fail(ctx, "holding changes", err)
}

// Changes returns the instance's changes after after (store.Store).
func (s *Store) Changes(ctx context.Context, inst string, after uint64, limit int) ([]store.Change, error) {
	if err := checkName("instance", inst); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("mongo: changes of %s: limit %d is not positive", inst, limit)
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.changes.Find(octx, bson.D{{Key: "_id", Value: changeRange(inst, after)}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, s.fail(ctx, "reading changes", err)
	}
	var docs []changeDoc
	if err := cur.All(octx, &docs); err != nil {
		return nil, s.fail(ctx, "reading changes", err)
	}
	if len(docs) > 0 && uint64(docs[0].Seq) != after+1 {
		return nil, fmt.Errorf("mongo: changes of %s after %d: %w", inst, after, store.ErrHistoryGone)
	}
	out := make([]store.Change, 0, len(docs))
	for _, d := range docs {
		c := store.Change{Seq: uint64(d.Seq), Time: d.Time.Time().UTC(), Op: store.ChangeOp(d.Op), Type: d.Type, ID: d.Record, Changed: d.Changed}
		if d.Before != nil {
			if c.Before, err = decodeRecord(d.Before); err != nil {
				return nil, fmt.Errorf("mongo: change %d of %s: %w", d.Seq, inst, err)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// LastChange returns the newest Seq of the instance (store.Store): the
// last _id of its range.
func (s *Store) LastChange(ctx context.Context, inst string) (uint64, error) {
	if err := checkName("instance", inst); err != nil {
		return 0, err
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	var d changeDoc
	err := s.changes.FindOne(octx, bson.D{{Key: "_id", Value: changeRange(inst, 0)}},
		options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).SetProjection(bson.D{{Key: "s", Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, s.fail(ctx, "reading the last change", err)
	}
	return uint64(d.Seq), nil
}

// Wait blocks until the instance has a change after after (store.Store):
// woken by a write of this process at once, by one of another process
// when the poller sees it.
func (s *Store) Wait(ctx context.Context, inst string, after uint64) (uint64, error) {
	if err := checkName("instance", inst); err != nil {
		return 0, err
	}
	return s.feed.Wait(ctx, inst, after, s.LastChange, s.stop, fmt.Errorf("mongo: store closed: %w", store.ErrUnavailable))
}

// pollChanges is the poller goroutine (see above); it ends when the store
// closes.
func (s *Store) pollChanges() {
	defer close(s.polled)
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		watched := s.feed.Watched()
		if len(watched) == 0 {
			continue
		}
		var next []string
		for inst, afters := range watched {
			for _, a := range afters {
				next = append(next, changeKey(inst, a+1))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.OpTimeout)
		cur, err := s.changes.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: next}}}},
			options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
		var found []struct {
			ID string `bson:"_id"`
		}
		if err == nil {
			err = cur.All(ctx, &found)
		}
		cancel()
		if err != nil {
			// The database is away: the waiters keep waiting, and the
			// next tick asks again.
			continue
		}
		for _, f := range found {
			if i := strings.LastIndexByte(f.ID, '/'); i > 0 {
				s.feed.Wake(f.ID[:i])
			}
		}
	}
}

// dropChanges removes an instance's feed (DropInstance).
func (s *Store) dropChanges(ctx context.Context, inst string) error {
	unlock, err := s.feedLocks.lock(ctx, inst)
	if err != nil {
		return err
	}
	defer unlock()
	octx, cancel := s.op(ctx)
	defer cancel()
	_, err = s.changes.DeleteMany(octx, bson.D{{Key: "_id", Value: bson.D{
		{Key: "$gte", Value: inst + "/"}, {Key: "$lt", Value: inst + "0"}}}})
	if err == nil {
		_, err = s.hints.DeleteMany(octx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: []string{inst, holdKey(inst)}}}}})
	}
	s.mu.Lock()
	delete(s.heads, inst)
	s.mu.Unlock()
	return s.fail(ctx, "dropping the change feed", err)
}
