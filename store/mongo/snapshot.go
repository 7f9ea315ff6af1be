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

// Snapshot reads the collections in pages of the _id index
// (store.Store). Without multi-document transactions (a standalone
// server, FerretDB) MongoDB offers no moment that spans documents: each
// record and document is read whole, as it was when its page was read,
// so what was written before the snapshot began and not changed while it
// ran is in it exactly, and a write made while it runs may or may not
// be. (A replica set's snapshot read concern would give one moment, but
// only for up to minSnapshotHistoryWindowInSeconds, five minutes by
// default, too short for a large backup.) Each page is one query with
// the store's operation timeout, so no cursor outlives it.
func (s *Store) Snapshot(ctx context.Context) (store.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &snapshot{s: s}, nil
}

type snapshot struct{ s *Store }

func (sn *snapshot) Close() error { return nil }

// page reads the documents of coll whose _id lies in [from, to), after
// the _id after (exclusive), in _id order, snapshotBatch at a time, and
// calls fn with each.
func (s *Store) page(ctx context.Context, coll *mongo.Collection, from, to string, fn func(bson.M) error) error {
	after := ""
	for {
		cond := bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}
		if after != "" {
			cond = bson.D{{Key: "$gt", Value: after}, {Key: "$lt", Value: to}}
		}
		octx, cancel := s.op(ctx)
		cur, err := coll.Find(octx, bson.D{{Key: "_id", Value: cond}},
			options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(snapshotBatch))
		if err != nil {
			cancel()
			return s.fail(ctx, "reading a snapshot", err)
		}
		var docs []bson.M
		err = cur.All(octx, &docs)
		cancel()
		if err != nil {
			return s.fail(ctx, "reading a snapshot", err)
		}
		for _, d := range docs {
			if err := fn(d); err != nil {
				return err
			}
		}
		if len(docs) < snapshotBatch {
			return nil
		}
		after, _ = docs[len(docs)-1]["_id"].(string)
	}
}

func (sn *snapshot) Instances(ctx context.Context) ([]string, error) {
	s := sn.s
	seen := map[string]bool{}
	for _, q := range []struct {
		coll  *mongo.Collection
		field string
	}{{s.records, fInst}, {s.usage, "_id"}} {
		ids, err := s.distinct(ctx, q.coll, q.field)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			seen[id] = true
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		if q, _ := sn.Counters(ctx, id); len(q) > 0 {
			out = append(out, id)
			continue
		}
		n, err := s.records.CountDocuments(ctx, bson.D{{Key: fInst, Value: id}}, options.Count().SetLimit(1))
		if err != nil {
			return nil, s.fail(ctx, "listing instances", err)
		}
		if n > 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (sn *snapshot) Records(ctx context.Context, inst string, fn func(*store.Record) error) error {
	if err := checkName("instance", inst); err != nil {
		return err
	}
	return sn.s.page(ctx, sn.s.records, inst+"/", inst+"0", func(d bson.M) error {
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
	return sn.s.page(ctx, sn.s.docs, kind+"/", kind+"0", func(d bson.M) error {
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
