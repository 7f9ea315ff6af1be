package mongo

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/corehq/core/store"
)

// Unique values are claims: one document per (instance, type, field,
// value) in the uniques collection, whose _id is that tuple, so the
// server's _id index refuses a second claim (doc.go, "Unique values").
// MongoDB's own unique indexes cannot say "unique per instance, missing and
// null allowed many times" without partial indexes, which not every
// MongoDB-compatible server has.

// claimKey is the _id of a claim.
func claimKey(inst, typ, field, valueKey string) string {
	return inst + "/" + typ + "/" + field + "/" + valueKey
}

// claim takes the values of one unique field for record id. It returns the
// claims it inserted (not the ones id already held), so that a failing op
// can give them back. A value held by another record is a
// *store.FieldError wrapping store.ErrUnique — unless that claim is stale:
// older than the lock lease while its record no longer holds the value
// (a writer that died between claiming and writing, or a failed release).
// The claim's age is the one reading of the clock here: it is about
// writers in flight, never about record data.
func (s *Store) claim(ctx context.Context, inst, typ, id, field string, values map[string]any) ([]string, error) {
	var added []string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		ck := claimKey(inst, typ, field, k)
		for attempt := 0; ; attempt++ {
			octx, cancel := s.op(ctx)
			_, err := s.uniques.InsertOne(octx, bson.D{
				{Key: "_id", Value: ck}, {Key: fInst, Value: inst}, {Key: fType, Value: typ},
				{Key: "f", Value: field}, {Key: "r", Value: id}, {Key: "at", Value: dateOf(time.Now())},
			})
			cancel()
			if err == nil {
				added = append(added, ck)
				break
			}
			if !mongo.IsDuplicateKeyError(err) {
				return added, s.fail(ctx, "claiming a unique value", err)
			}
			owner, at, err := s.claimOwner(ctx, ck)
			if err != nil {
				return added, err
			}
			if owner == id {
				break // already ours
			}
			if owner != "" && attempt < 3 {
				stale, err := s.staleClaim(ctx, inst, typ, field, k, owner, at)
				if err != nil {
					return added, err
				}
				if !stale {
					return added, &store.FieldError{Err: store.ErrUnique, Type: typ, Field: field, Value: values[k]}
				}
				octx, cancel := s.op(ctx)
				_, err = s.uniques.DeleteOne(octx, bson.D{{Key: "_id", Value: ck}, {Key: "r", Value: owner}})
				cancel()
				if err != nil {
					return added, s.fail(ctx, "freeing a stale unique value", err)
				}
			}
			if attempt >= 3 {
				return added, &store.FieldError{Err: store.ErrUnique, Type: typ, Field: field, Value: values[k]}
			}
		}
	}
	return added, nil
}

// claimOwner returns the record id holding a claim and when it was taken;
// "" when the claim is gone.
func (s *Store) claimOwner(ctx context.Context, ck string) (string, time.Time, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	var c struct {
		R  string        `bson:"r"`
		At bson.DateTime `bson:"at"`
	}
	err := s.uniques.FindOne(octx, bson.D{{Key: "_id", Value: ck}}).Decode(&c)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, s.fail(ctx, "reading a unique value", err)
	}
	return c.R, c.At.Time(), nil
}

// staleClaim reports a claim that no record stands behind any more.
func (s *Store) staleClaim(ctx context.Context, inst, typ, field, valueKey, owner string, at time.Time) (bool, error) {
	if time.Since(at) < s.cfg.LockLease {
		return false, nil // its writer may still be on its way
	}
	r, err := s.Get(ctx, inst, typ, owner)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	_, holds := uniqueValues(r.Fields[field])[valueKey]
	return !holds, nil
}

// unclaim gives back claims of record id. It is best effort: a claim left
// behind is stale and the next writer of the value frees it (claim).
func (s *Store) unclaim(ctx context.Context, keys []string, id string) {
	if len(keys) == 0 {
		return
	}
	ids := make(bson.A, len(keys))
	for i, k := range keys {
		ids[i] = k
	}
	octx, cancel := s.op(context.WithoutCancel(ctx))
	defer cancel()
	_, _ = s.uniques.DeleteMany(octx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "r", Value: id}})
}
