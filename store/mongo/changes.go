package mongo

import (
	"context"
	"errors"
	"fmt"
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
// Allocation. An op's change is inserted after the op applied, while the
// record's lock is still held (so one record's changes are in the order
// of its writes), under a per-instance mutex of the process, with the
// number after the newest this process knows of. Only an insert that
// succeeds takes a number, and the _id index refuses a second taker: a
// process that meets a taken number (another process wrote) reads the
// newest and tries the next. So the numbers have no gaps, and a reader
// never sees n+1 without n: a change is committed when its insert is.
// Without transactions, a Write failing half way keeps the changes of the
// ops that applied (they did change the records), and a process dying
// between an op and its insert loses that one change. After DropInstance
// in another process, a process that still writes the instance numbers
// on from the newest it knew (a reader from 0 then meets ErrHistoryGone
// and starts afresh), which is harmless: cursors never go backwards.
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
// Retention (Config.Retention) is trimmed by the writer whose number
// crosses a multiple of Retention.TrimEvery: it deletes the oldest
// changes up to the newest Count, stopping at the first one younger than
// Age, so the feed always loses a prefix. A failed trim is tried again at
// the next trim point.
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

// appendChange inserts the change of an applied op (see above) and wakes
// the instance's waiters in this process.
func (s *Store) appendChange(ctx context.Context, inst string, c store.Change, before bson.M) error {
	unlock, err := s.feedLocks.lock(ctx, inst)
	if err != nil {
		return err
	}
	s.mu.RLock()
	seq, known := s.heads[inst]
	s.mu.RUnlock()
	if !known {
		if seq, err = s.LastChange(ctx, inst); err != nil {
			unlock()
			return err
		}
	}
	doc := changeDoc{Inst: inst, Time: dateOf(time.Now()), Op: string(c.Op), Type: c.Type, Record: c.ID, Changed: c.Changed, Before: before}
	for attempt := 0; ; attempt++ {
		seq++
		doc.ID, doc.Seq = changeKey(inst, seq), int64(seq)
		octx, cancel := s.op(ctx)
		_, err = s.changes.InsertOne(octx, doc)
		cancel()
		if err == nil {
			break
		}
		if !mongo.IsDuplicateKeyError(err) || attempt >= maxRetries {
			unlock()
			return s.fail(ctx, "appending a change", err)
		}
		// Another process took the number: start after its newest.
		if seq, err = s.LastChange(ctx, inst); err != nil {
			unlock()
			return err
		}
	}
	s.mu.Lock()
	s.heads[inst] = seq
	s.mu.Unlock()
	unlock()
	s.feed.Wake(inst)
	if r := s.cfg.Retention; r.TrimDue(seq-1, seq) {
		// Best effort: the next trim point tries again.
		_ = s.trimChanges(context.WithoutCancel(ctx), inst, seq)
	}
	return nil
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
	_, err := s.changes.DeleteMany(octx, bson.D{{Key: "_id", Value: bson.D{
		{Key: "$gte", Value: inst + "/"}, {Key: "$lte", Value: changeKey(inst, cut)}}}})
	return s.fail(ctx, "trimming changes", err)
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
	s.mu.Lock()
	delete(s.heads, inst)
	s.mu.Unlock()
	return s.fail(ctx, "dropping the change feed", err)
}
