package mongo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
)

// maxRetries bounds the retries of one op that meets a concurrent write
// (an upsert racing another insert of the same record, a list edit whose
// record changed under it).
const maxRetries = 20

// Write applies ops in order, each as its own acknowledged single-document
// write (with the configured write concern). There are no transactions:
// the ops are validated first (validate.go), so that a missing required
// field or a taken unique value fails the Write with nothing written; a
// failure past that point (a concurrent writer, the database) leaves the
// ops before it applied and does not try the ones after it. Decisions
// store.go leaves open are the bolt store's (store/bolt/write.go), so that
// both answer alike.
//
// A quota is checked before any op applies (checkQuota, usage.go), and
// what the applied ops changed is added to the instance's usage at the
// end, also when an op fails half way: queued for the instance's flusher,
// whose one $inc carries what every Write of the instance in this process
// queued meanwhile (addUsage); Write does not wait for it.
func (s *Store) Write(ctx context.Context, inst string, ops []store.Op, quota store.Quota) (_ []store.OpResult, err error) {
	if err := checkName("instance", inst); err != nil {
		return nil, err
	}
	prepared, err := store.PrepareOps(ops)
	if err != nil {
		return nil, err
	}
	// What a document cannot hold beyond what PrepareOps refuses: a type
	// with '/', an empty field name, NaN and infinities.
	for i := range prepared {
		op := &prepared[i]
		if err := checkName("type", op.Type); err != nil {
			return nil, fmt.Errorf("mongo: op %d: %w", i, err)
		}
		if op.Kind == store.OpUpsert {
			for k, v := range op.Set {
				if k == "" {
					return nil, fmt.Errorf("mongo: op %d (%s): empty field name", i, op.Type)
				}
				if _, err := encodeValue(k, v); err != nil {
					return nil, fmt.Errorf("mongo: op %d (%s): %w", i, op.Type, err)
				}
			}
		}
		op.Now = op.Now.UTC().Truncate(time.Millisecond)
	}
	if err := s.validate(ctx, inst, prepared); err != nil {
		return nil, err
	}
	if err := s.ensureUsage(ctx, inst); err != nil {
		return nil, err
	}
	if quota.Applies(prepared) {
		if err := s.checkQuota(ctx, inst, prepared, quota); err != nil {
			return nil, err
		}
	}
	var delta store.Usage
	defer func() { s.addUsage(inst, delta) }()
	results := make([]store.OpResult, len(prepared))
	for i := range prepared {
		res, d, err := s.apply(ctx, inst, &prepared[i])
		delta.Records += d.Records
		delta.StorageBytes += d.StorageBytes
		if err != nil {
			return nil, err
		}
		results[i] = res
	}
	return results, nil
}

func mustEncode(field string, v any) any {
	e, _ := encodeValue(field, v) // validated by the caller
	return e
}

// apply runs one op under its record's lock (lock.go) and returns what it
// changed the instance's usage by. The op's change, if it made one, is
// appended to the feed before the lock is released (changes.go). An
// upsert of a new id (store.Op.New) is a create, which needs no lock
// document (create).
func (s *Store) apply(ctx context.Context, inst string, op *store.Op) (store.OpResult, store.Usage, error) {
	key := recordKey(inst, op.Type, op.ID)
	if op.Kind == store.OpUpsert && op.New {
		res, used, done, err := s.create(ctx, inst, key, op)
		if done {
			return res, used, err
		}
	}
	unlock, err := s.lockRecord(ctx, key)
	if err != nil {
		return store.OpResult{}, store.Usage{}, err
	}
	defer unlock()
	var ch noted
	var res store.OpResult
	var used store.Usage
	switch op.Kind {
	case store.OpUpsert:
		res, used, err = s.upsert(ctx, inst, key, op, &ch)
	case store.OpDelete:
		res, used, err = s.delete(ctx, inst, key, op, &ch)
	case store.OpTrash, store.OpUntrash:
		res, used, err = s.trash(ctx, key, op, &ch)
	default:
		res, used, err = s.edit(ctx, key, op, &ch)
	}
	if err == nil && ch.ok {
		err = s.appendChange(ctx, inst, ch.Change, ch.before)
	}
	return res, used, err
}

// noted is the change an op made, for the feed: ok when there is one;
// before is the record document a delete removed.
type noted struct {
	store.Change
	ok     bool
	before bson.M
}

// resized is the usage change of a record document replaced by next.
func resized(oldSize int64, next bson.M) (store.Usage, error) {
	size, err := docSize(next)
	return store.Usage{StorageBytes: size - oldSize}, err
}

// upsert creates the record or sets the fields of Set: one
// findOneAndUpdate with $set per field (so concurrent upserts of other
// fields lose nothing) and $setOnInsert for what only a create writes. The
// document it returns is the record before, which tells whether the op
// created it, which unique values it held and its size.
func (s *Store) upsert(ctx context.Context, inst, key string, op *store.Op, ch *noted) (store.OpResult, store.Usage, error) {
	uniqueFields, claimed, err := s.claimSet(ctx, inst, op)
	if err != nil {
		return store.OpResult{}, store.Usage{}, err
	}
	missing := missingField(op)
	set := bson.D{{Key: fUpdated, Value: dateOf(op.Now)}}
	for _, f := range slices.Sorted(maps.Keys(op.Set)) {
		set = append(set, bson.E{Key: fieldPath([]string{f}), Value: mustEncode(f, op.Set[f])})
	}
	onInsert := bson.D{
		{Key: fInst, Value: inst}, {Key: fType, Value: op.Type}, {Key: fID, Value: op.ID},
		{Key: fCreated, Value: dateOf(op.Now)},
	}
	if op.CreatedBy != "" {
		onInsert = append(onInsert, bson.E{Key: fCreatedBy, Value: op.CreatedBy})
	}
	if op.Impl != "" {
		onInsert = append(onInsert, bson.E{Key: fImpl, Value: op.Impl})
	}
	if len(op.Set) == 0 {
		// An empty f keeps "fields" an object for $set paths to come.
		onInsert = append(onInsert, bson.E{Key: fFields, Value: bson.M{}})
	}
	update := bson.D{
		{Key: "$set", Value: set},
		{Key: "$setOnInsert", Value: onInsert},
		{Key: "$inc", Value: bson.D{{Key: fVersion, Value: int64(1)}}},
	}
	// A create without a required field must not happen: without one, the
	// op may only update an existing record.
	opts := options.FindOneAndUpdate().SetReturnDocument(options.Before).SetUpsert(missing == "")
	var old bson.M
	var oldRaw bson.Raw
	for attempt := 0; ; attempt++ {
		var filter bson.D
		var existed bool
		if filter, existed, err = s.keepFilter(ctx, key, op); err != nil {
			s.unclaim(ctx, claimed, op.ID)
			return store.OpResult{}, store.Usage{}, err
		}
		octx, cancel := s.op(ctx)
		old = nil
		res := s.records.FindOneAndUpdate(octx, filter, update, opts)
		oldRaw, err = res.Raw()
		if err == nil {
			err = res.Decode(&old)
		}
		cancel()
		// Two upserts of a new record may both try the insert; the loser
		// retries and finds the record. A record that changed since
		// keepFilter read it is read again: an upsert meets the _id
		// (a duplicate key), an update (missing) finds nothing.
		changed := missing != "" && existed && errors.Is(err, mongo.ErrNoDocuments)
		if (mongo.IsDuplicateKeyError(err) || changed) && attempt < maxRetries {
			continue
		}
		break
	}
	created := errors.Is(err, mongo.ErrNoDocuments)
	if err != nil && !created {
		s.unclaim(ctx, claimed, op.ID)
		return store.OpResult{}, store.Usage{}, s.fail(ctx, "upsert", err)
	}
	if created && missing != "" {
		s.unclaim(ctx, claimed, op.ID)
		return store.OpResult{}, store.Usage{}, &store.FieldError{Err: store.ErrRequired, Type: op.Type, Field: missing}
	}

	var rec *store.Record
	var used store.Usage
	if created {
		rec = &store.Record{Type: op.Type, ID: op.ID, Created: op.Now, CreatedBy: op.CreatedBy, Impl: op.Impl, Fields: map[string]any{}}
		used, err = resized(0, upsertedDoc(inst, key, nil, op))
		used.Records = 1
		ch.Change, ch.ok = store.OpChange(op, nil, nil)
	} else {
		used, err = resized(int64(len(oldRaw)), upsertedDoc(inst, key, old, op))
		if err == nil {
			rec, err = decodeRecord(old)
		}
		if err != nil {
			return store.OpResult{}, used, err
		}
		ch.Change, ch.ok = store.OpChange(op, rec, nil)
		// Release the unique values the op replaced.
		var freed []string
		for _, f := range uniqueFields {
			now := uniqueValues(op.Set[f])
			for k := range uniqueValues(rec.Fields[f]) {
				if _, kept := now[k]; !kept {
					freed = append(freed, claimKey(inst, op.Type, f, k))
				}
			}
		}
		s.unclaim(ctx, freed, op.ID)
	}
	if err != nil {
		return store.OpResult{}, used, err
	}
	rec.Updated = op.Now
	for k, v := range op.Set {
		rec.Fields[k] = decodeValue(mustEncode(k, v)) // a copy the caller may keep
	}
	return store.OpResult{Created: created, Changed: true, Record: rec}, used, nil
}

// keepFilter is the filter of an upsert's findOneAndUpdate. It is the
// record's _id, unless the op sets a field it keeps (store.Op.Keep): then
// keepFilter reads the record first, fails the op if it would change a
// kept field, and adds the version read (v) to the filter, or, when there
// is no record, that there is none yet, so that the write applies only to
// the record checked. existed reports that it read a record: an update
// that then finds nothing met a concurrent write and reads again
// (upsert). (MongoDB's own
// equality cannot compare the fields: an object's keys are stored in no
// fixed order.)
func (s *Store) keepFilter(ctx context.Context, key string, op *store.Op) (_ bson.D, existed bool, _ error) {
	filter := bson.D{{Key: "_id", Value: key}}
	if !op.SetsKept() {
		return filter, false, nil
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	var doc bson.M
	err := s.records.FindOne(octx, filter).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return append(filter, bson.E{Key: fVersion, Value: bson.D{{Key: "$exists", Value: false}}}), false, nil
	}
	if err != nil {
		return nil, false, s.fail(ctx, "upsert", err)
	}
	rec, err := decodeRecord(doc)
	if err != nil {
		return nil, false, err
	}
	if err := store.CheckKept(op, rec.Fields, op.Set); err != nil {
		return nil, false, err
	}
	return append(filter, bson.E{Key: fVersion, Value: doc[fVersion]}), true, nil
}

// claimSet claims the unique values an upsert sets, before they are
// written. It returns the op's unique fields and the claims it inserted
// (to give back if the op fails); on failure it gives them back itself.
func (s *Store) claimSet(ctx context.Context, inst string, op *store.Op) (fields, claimed []string, err error) {
	ts, err := s.typeState(ctx, inst, op.Type)
	if err != nil {
		return nil, nil, err
	}
	for f := range op.Set {
		if ts.unique[f] {
			fields = append(fields, f)
		}
	}
	slices.Sort(fields)
	for _, f := range fields {
		got, err := s.claim(ctx, inst, op.Type, op.ID, f, uniqueValues(op.Set[f]))
		claimed = append(claimed, got...)
		if err != nil {
			s.unclaim(ctx, claimed, op.ID)
			return nil, nil, err
		}
	}
	return fields, claimed, nil
}

// missingField is the first required field an upsert leaves null: a
// create without it must not happen.
func missingField(op *store.Op) string {
	for _, f := range op.Required {
		if op.Set[f] == nil {
			return f
		}
	}
	return ""
}

// create writes the record of an upsert whose id the caller has just
// generated (store.Op.New). No other writer can know the id, so no lock
// document guards the record (lockRecord): only the keyed mutex of the
// process, which costs no round trip. The write is one InsertOne of the
// whole document, as upsert's findOneAndUpdate would create it
// (upsertedDoc), and the _id index makes it atomic on any server. done is
// false when the op must take upsert's locked path instead: it lacks a
// required field (upsert refuses it), or the insert met a duplicate key
// (the id exists after all: the caller's mistake). The claims create made
// are then upsert's already; if upsert fails, they go stale and the next
// writer of those values frees them (claim).
func (s *Store) create(ctx context.Context, inst, key string, op *store.Op) (_ store.OpResult, _ store.Usage, done bool, _ error) {
	if missingField(op) != "" {
		return store.OpResult{}, store.Usage{}, false, nil
	}
	unlock, err := s.local.lock(ctx, key)
	if err != nil {
		return store.OpResult{}, store.Usage{}, true, err
	}
	defer unlock()
	_, claimed, err := s.claimSet(ctx, inst, op)
	if err != nil {
		return store.OpResult{}, store.Usage{}, true, err
	}
	doc := upsertedDoc(inst, key, nil, op)
	octx, cancel := s.op(ctx)
	_, err = s.records.InsertOne(octx, doc)
	cancel()
	if mongo.IsDuplicateKeyError(err) {
		return store.OpResult{}, store.Usage{}, false, nil
	}
	if err != nil {
		s.unclaim(ctx, claimed, op.ID)
		return store.OpResult{}, store.Usage{}, true, s.fail(ctx, "create", err)
	}
	used, err := resized(0, doc)
	used.Records = 1
	if err != nil {
		return store.OpResult{}, used, true, err
	}
	rec := &store.Record{Type: op.Type, ID: op.ID, Created: op.Now, Updated: op.Now, CreatedBy: op.CreatedBy, Impl: op.Impl, Fields: map[string]any{}}
	for k, v := range op.Set {
		rec.Fields[k] = decodeValue(mustEncode(k, v)) // a copy the caller may keep
	}
	if c, ok := store.OpChange(op, nil, nil); ok {
		err = s.appendChange(ctx, inst, c, nil)
	}
	return store.OpResult{Created: true, Changed: true, Record: rec}, used, true, err
}

// delete removes the record and frees its unique values.
func (s *Store) delete(ctx context.Context, inst, key string, op *store.Op, ch *noted) (store.OpResult, store.Usage, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	var old bson.M
	res := s.records.FindOneAndDelete(octx, bson.D{{Key: "_id", Value: key}})
	raw, err := res.Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return store.OpResult{}, store.Usage{}, nil
	}
	if err != nil {
		return store.OpResult{}, store.Usage{}, s.fail(ctx, "delete", err)
	}
	used := store.Usage{Records: -1, StorageBytes: -int64(len(raw))}
	if err := res.Decode(&old); err != nil {
		return store.OpResult{}, used, s.fail(ctx, "delete", err)
	}
	rec, err := decodeRecord(old)
	if err != nil {
		return store.OpResult{}, used, err
	}
	ts, err := s.typeState(ctx, inst, op.Type)
	if err != nil {
		return store.OpResult{}, used, err
	}
	var freed []string
	for f := range ts.unique {
		for k := range uniqueValues(rec.Fields[f]) {
			freed = append(freed, claimKey(inst, op.Type, f, k))
		}
	}
	s.unclaim(ctx, freed, op.ID)
	ch.Change, ch.ok = store.OpChange(op, rec, nil)
	ch.before = old
	return store.OpResult{Changed: true}, used, nil
}

// trash sets core.trashed to Now unless it is set (OpTrash), or clears it
// (OpUntrash). Updated does not change. Changed is true whenever the
// record exists.
func (s *Store) trash(ctx context.Context, key string, op *store.Op, ch *noted) (store.OpResult, store.Usage, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	filter := bson.D{{Key: "_id", Value: key}}
	var update bson.D
	if op.Kind == store.OpTrash {
		filter = append(filter, bson.E{Key: fTrashed, Value: nil})
		update = bson.D{{Key: "$set", Value: bson.D{{Key: fTrashed, Value: dateOf(op.Now)}}}}
	} else {
		filter = append(filter, bson.E{Key: fTrashed, Value: bson.D{{Key: "$exists", Value: true}}})
		update = bson.D{{Key: "$unset", Value: bson.D{{Key: fTrashed, Value: ""}}}}
	}
	update = append(update, bson.E{Key: "$inc", Value: bson.D{{Key: fVersion, Value: int64(1)}}})
	res := s.records.FindOneAndUpdate(octx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.Before))
	raw, err := res.Raw()
	if err == nil {
		var old bson.M
		if err := res.Decode(&old); err != nil {
			return store.OpResult{}, store.Usage{}, s.fail(ctx, "trash", err)
		}
		used, err := resized(int64(len(raw)), trashedDoc(old, op))
		ch.Change, ch.ok = store.Change{Op: store.ChangeTrashed, Type: op.Type, ID: op.ID}, true
		if op.Kind == store.OpUntrash {
			ch.Op = store.ChangeUntrashed
		}
		return store.OpResult{Changed: true}, used, err
	}
	if !errors.Is(err, mongo.ErrNoDocuments) {
		return store.OpResult{}, store.Usage{}, s.fail(ctx, "trash", err)
	}
	// Nothing to change: does the record exist?
	n, err := s.records.CountDocuments(octx, bson.D{{Key: "_id", Value: key}})
	if err != nil {
		return store.OpResult{}, store.Usage{}, s.fail(ctx, "trash", err)
	}
	return store.OpResult{Changed: n > 0}, store.Usage{}, nil
}

// edit applies an edit op (store.OpKind.IsEdit: a reference added or
// removed, values removed from a list, math): read the record, compute
// the fields (store.Op.Edit), and write them back only if the record's
// version is still the one read (else read again). The condition makes
// it atomic: no write between the read and the change is lost.
func (s *Store) edit(ctx context.Context, key string, op *store.Op, ch *noted) (store.OpResult, store.Usage, error) {
	for attempt := 0; ; attempt++ {
		octx, cancel := s.op(ctx)
		var doc bson.M
		res := s.records.FindOne(octx, bson.D{{Key: "_id", Value: key}})
		raw, err := res.Raw()
		if err == nil {
			err = res.Decode(&doc)
		}
		if errors.Is(err, mongo.ErrNoDocuments) {
			cancel()
			return store.OpResult{}, store.Usage{}, nil
		}
		if err != nil {
			cancel()
			return store.OpResult{}, store.Usage{}, s.fail(ctx, "edit", err)
		}
		rec, err := decodeRecord(doc)
		if err != nil {
			cancel()
			return store.OpResult{}, store.Usage{}, err
		}
		set, err := op.Edit(rec.Fields)
		if err != nil {
			cancel()
			return store.OpResult{}, store.Usage{}, err
		}
		if len(set) == 0 {
			cancel()
			return store.OpResult{Changed: true}, store.Usage{}, nil
		}
		fields := make([]string, 0, len(set))
		sets := bson.D{{Key: fUpdated, Value: dateOf(op.Now)}}
		for _, f := range slices.Sorted(maps.Keys(set)) {
			v, err := encodeValue(f, set[f])
			if err != nil {
				cancel()
				return store.OpResult{}, store.Usage{}, err
			}
			sets = append(sets, bson.E{Key: fieldPath([]string{f}), Value: v})
			fields = append(fields, f)
		}
		ures, err := s.records.UpdateOne(octx,
			bson.D{{Key: "_id", Value: key}, {Key: fVersion, Value: doc[fVersion]}},
			bson.D{
				{Key: "$set", Value: sets},
				{Key: "$inc", Value: bson.D{{Key: fVersion, Value: int64(1)}}},
			})
		cancel()
		if err != nil {
			return store.OpResult{}, store.Usage{}, s.fail(ctx, "edit", err)
		}
		if ures.MatchedCount > 0 {
			used, err := resized(int64(len(raw)), editedDoc(doc, op, set))
			ch.Change, ch.ok = store.Change{Op: store.ChangeUpdated, Type: op.Type, ID: op.ID, Changed: fields}, true
			return store.OpResult{Changed: true}, used, err
		}
		if attempt >= maxRetries {
			return store.OpResult{}, store.Usage{}, fmt.Errorf("mongo: %s/%s: the record kept changing: %w", op.Type, op.ID, store.ErrUnavailable)
		}
	}
}
