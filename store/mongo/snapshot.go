package mongo

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
)

// snapshotBatch is how many documents one read of a Snapshot takes.
const snapshotBatch = 1000

// Snapshot reads the collections with one cursor per instance or
// document kind (store.Store); records come in the database's order, not
// sorted. Without multi-document transactions (a standalone
// server, FerretDB) MongoDB offers no moment that spans documents: each
// record and document is read whole, as it was when the cursor reached it,
// so what was written before the snapshot began and not changed while it
// ran is in it exactly, and a write made while it runs may or may not
// be. (A replica set's snapshot read concern would give one moment, but
// only for up to minSnapshotHistoryWindowInSeconds, five minutes by
// default, too short for a large backup.)
func (s *Store) Snapshot(ctx context.Context) (store.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &snapshot{s: s}, nil
}

type snapshot struct{ s *Store }

func (sn *snapshot) Close() error { return nil }

// stream reads the documents of coll that filter selects with one
// cursor, snapshotBatch a round trip, and calls fn with each. The cursor
// has no time-out of the store's (it runs as long as the data does) but
// ends with ctx. sort, when not nil, orders them: FerretDB sorts in
// memory, so only small collections are read sorted.
func (s *Store) stream(ctx context.Context, coll *mongo.Collection, filter, sort bson.D, fn func(bson.M) error) error {
	opts := options.Find().SetBatchSize(snapshotBatch)
	if sort != nil {
		opts.SetSort(sort)
	}
	cur, err := coll.Find(ctx, filter, opts)
	if err != nil {
		return s.fail(ctx, "reading a snapshot", err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		var d bson.M
		if err := cur.Decode(&d); err != nil {
			return s.fail(ctx, "reading a snapshot", err)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return s.fail(ctx, "reading a snapshot", cur.Err())
}

// Instances reads the usage collection (one document per instance that
// has held records or counters, usage.go): the instances that hold some
// now. An instance stored before usage was kept has its document once it
// has been declared or written in any process (ensureUsage).
func (sn *snapshot) Instances(ctx context.Context) ([]string, error) {
	var out []string
	err := sn.s.stream(ctx, sn.s.usage, bson.D{}, nil, func(d bson.M) error {
		id, _ := d["_id"].(string)
		var u usageDoc
		raw, err := bson.Marshal(d)
		if err == nil {
			err = bson.Unmarshal(raw, &u)
		}
		if err != nil {
			return fmt.Errorf("mongo: the usage of %s: %w", id, err)
		}
		if (u.Records != nil && *u.Records > 0) || len(u.Counters) > 0 {
			out = append(out, id)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

func (sn *snapshot) Records(ctx context.Context, inst string, fn func(*store.Record) error) error {
	if err := checkName("instance", inst); err != nil {
		return err
	}
	return sn.s.stream(ctx, sn.s.records, bson.D{{Key: fInst, Value: inst}}, nil, func(d bson.M) error {
		r, err := decodeRecord(d)
		if err != nil {
			return fmt.Errorf("%v: %w", d["_id"], err)
		}
		return fn(r)
	})
}

func (sn *snapshot) Counters(ctx context.Context, inst string) (map[string]int64, error) {
	u, err := sn.s.Usage(ctx, inst)
	return u.Counters, err
}

func (sn *snapshot) DocKinds(ctx context.Context) ([]string, error) {
	return sn.s.distinct(ctx, sn.s.docs, "k")
}

// distinct returns the string values of a field in a collection, sorted:
// a $group (FerretDB's answer to the distinct command is not one the
// driver decodes).
func (s *Store) distinct(ctx context.Context, coll *mongo.Collection, field string) ([]string, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := coll.Aggregate(octx, mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$" + field}}}}})
	if err != nil {
		return nil, s.fail(ctx, "listing "+field, err)
	}
	var rows []struct {
		ID any `bson:"_id"`
	}
	if err := cur.All(octx, &rows); err != nil {
		return nil, s.fail(ctx, "listing "+field, err)
	}
	var out []string
	for _, r := range rows {
		if v, ok := r.ID.(string); ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (sn *snapshot) Docs(ctx context.Context, kind string, fn func(key string, doc []byte) error) error {
	if checkDoc(kind, "-") != nil {
		return nil
	}
	return sn.s.stream(ctx, sn.s.docs, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: kind + "/"}, {Key: "$lt", Value: kind + "0"}}}},
		bson.D{{Key: "_id", Value: 1}}, func(d bson.M) error {
			key, _ := d["key"].(string)
			var data []byte
			switch v := d["d"].(type) {
			case bson.Binary:
				data = v.Data
			case []byte:
				data = v
			}
			if data == nil {
				data = []byte{}
			}
			return fn(key, data)
		})
}
