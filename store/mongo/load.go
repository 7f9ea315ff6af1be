package mongo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
)

// Load writes records as they are (store.Store): it claims the values
// of the declared @unique fields, inserts the record documents in one
// ordered insertMany, and adds them to the usage. Without transactions,
// the records a failed call inserted before the failing one stay.
func (s *Store) Load(ctx context.Context, inst string, recs []*store.Record) error {
	if err := checkName("instance", inst); err != nil {
		return err
	}
	prepared, err := store.PrepareRecords(recs)
	if err != nil || len(prepared) == 0 {
		return err
	}
	types, err := s.instTypes(ctx, inst)
	if err != nil {
		return err
	}
	docs := make([]any, len(prepared))
	var added store.Usage
	for i, r := range prepared {
		if err := checkName("type", r.Type); err != nil {
			return err
		}
		doc, err := loadedDoc(inst, r)
		if err != nil {
			return err
		}
		size, err := docSize(doc)
		if err != nil {
			return err
		}
		added.Records++
		added.StorageBytes += size
		docs[i] = doc
		if ts := types[r.Type]; ts != nil {
			for _, f := range slices.Sorted(maps.Keys(ts.unique)) {
				if _, err := s.claim(ctx, inst, r.Type, r.ID, f, uniqueValues(r.Fields[f])); err != nil {
					return err
				}
			}
		}
	}
	octx, cancel := s.op(ctx)
	_, err = s.records.InsertMany(octx, docs, options.InsertMany().SetOrdered(true))
	cancel()
	if err != nil {
		var bw mongo.BulkWriteException
		if errors.As(err, &bw) && len(bw.WriteErrors) > 0 {
			// Count what went in before the failing record.
			first := bw.WriteErrors[0]
			done := prepared[:first.Index]
			s.addUsage(inst, usageOf(docs[:first.Index]))
			r := prepared[first.Index]
			if mongo.IsDuplicateKeyError(err) {
				return fmt.Errorf("mongo: %s %s: %w (%d records of the call loaded)", r.Type, r.ID, store.ErrExists, len(done))
			}
		}
		return s.fail(ctx, "loading records", err)
	}
	s.addUsage(inst, added)
	return nil
}

// usageOf is what record documents add to an instance's usage.
func usageOf(docs []any) store.Usage {
	var u store.Usage
	for _, d := range docs {
		size, _ := docSize(d.(bson.M))
		u.Records++
		u.StorageBytes += size
	}
	return u
}

// loadedDoc is the record document of a loaded record, as a write
// leaves it.
func loadedDoc(inst string, r *store.Record) (bson.M, error) {
	f := bson.M{}
	for k, v := range r.Fields {
		n, err := encodeValue(k, v)
		if err != nil {
			return nil, fmt.Errorf("mongo: %s %s: %w", r.Type, r.ID, err)
		}
		f[escapeKey(k)] = n
	}
	doc := bson.M{
		"_id": recordKey(inst, r.Type, r.ID), fInst: inst, fType: r.Type, fID: r.ID,
		fCreated: dateOf(r.Created), fUpdated: dateOf(r.Updated), fFields: f, fVersion: int64(1),
	}
	if r.Trashed != nil {
		doc[fTrashed] = dateOf(*r.Trashed)
	}
	if r.CreatedBy != "" {
		doc[fCreatedBy] = r.CreatedBy
	}
	if r.Impl != "" {
		doc[fImpl] = r.Impl
	}
	return doc, nil
}
