package mongo

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Aggregate computes a query's groups. A count of records, grouped or not
// by plain fields, under a filter that compiles exactly, is one
// aggregation pipeline ($match, $group with $sum: 1): the server counts,
// and only the groups come back. Every other query is one find with the
// filter pushed to the server and only the fields the filter, the groups
// and the aggregates read sent back; each record is checked with
// arcql.Match and handed to a store.Accumulator as the cursor streams:
// memory holds the groups, never the records. Sums, averages, extremes
// and distinct values are not asked of the server because the
// MongoDB-wire server the tests run (FerretDB 1.24) implements $count and
// $sum only, so a pipeline computing them could not be checked against
// the embedded store's results; the accumulator gives the same results on
// both stores by construction (kinds of sums, cross-kind extremes).
func (s *Store) Aggregate(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, error) {
	gs, _, err := s.aggregate(ctx, inst, q)
	return gs, err
}

// aggregate is Aggregate that also reports whether the server grouped
// (for tests).
func (s *Store) aggregate(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, bool, error) {
	if q == nil {
		return nil, false, errors.New("mongo: aggregate without a query")
	}
	if err := q.Check(); err != nil {
		return nil, false, err
	}
	if err := checkName("instance", inst); err != nil {
		return nil, false, err
	}
	acc := store.NewAccumulator(q)
	defer acc.Release()
	if checkName("type", q.Type) != nil {
		return acc.Groups(), false, nil
	}
	filter, err := store.ResolveHops(ctx, s, inst, q.Filter, s.cfg.HopLimit)
	if err != nil {
		return nil, false, err
	}
	p, err := buildPlan(inst, &store.Query{Type: q.Type, IncludeTrashed: q.IncludeTrashed}, filter, nil, nil)
	if err != nil {
		return nil, false, err
	}
	if p.none {
		return acc.Groups(), false, nil
	}
	if countable(q, p) {
		if err := s.countGroups(ctx, q, p, acc); err != nil {
			return nil, false, err
		}
		return acc.Groups(), true, nil
	}
	if err := s.streamRecords(ctx, q, p, filter, acc); err != nil {
		return nil, false, err
	}
	return acc.Groups(), false, nil
}

// countable reports whether the server can count q's groups: no field
// aggregates, group keys that are record fields without a time unit, and
// a filter that selects exactly.
func countable(q *store.AggQuery, p *plan) bool {
	if len(q.Fields) > 0 || !p.exact {
		return false
	}
	for _, k := range q.GroupBy {
		if k.Unit != "" || strings.HasPrefix(k.Field, "core.") {
			return false
		}
	}
	return true
}

// countGroups runs $match and $group and adds each group's count. A
// record without a key field and one with it null fall in one group here
// as in the accumulator (MongoDB keeps them apart: AddCount joins them).
// The server sends at most one group past the query's bound ($limit
// after $group), enough for the accumulator to refuse it, and groups in
// memory only (allowDiskUse false: its own 100 MB limit on a stage
// stands).
func (s *Store) countGroups(ctx context.Context, q *store.AggQuery, p *plan, acc *store.Accumulator) error {
	var id any
	if len(q.GroupBy) > 0 {
		keys := bson.D{}
		for i, k := range q.GroupBy {
			keys = append(keys, bson.E{Key: groupKeyName(i), Value: "$" + fieldPath(strings.Split(k.Field, "."))})
		}
		id = keys
	}
	pipeline := mongo.Pipeline{
		{{Key: "$match", Value: p.filter}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: id}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		{{Key: "$limit", Value: int64(q.GroupBound()) + 1}},
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.records.Aggregate(octx, pipeline, options.Aggregate().SetAllowDiskUse(false))
	if err != nil {
		return s.fail(ctx, "aggregate", err)
	}
	defer cur.Close(context.WithoutCancel(octx))
	keys := make([]any, len(q.GroupBy))
	for cur.Next(octx) {
		var doc struct {
			ID bson.M `bson:"_id"`
			N  int64  `bson:"n"`
		}
		if err := cur.Decode(&doc); err != nil {
			return s.fail(ctx, "decoding a group", err)
		}
		for i := range keys {
			keys[i] = decodeValue(doc.ID[groupKeyName(i)])
		}
		if err := acc.AddCount(keys, int(doc.N)); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return s.fail(ctx, "aggregate", err)
	}
	return nil
}

// groupKeyName names the i-th group key in a $group _id.
func groupKeyName(i int) string { return "k" + strconv.Itoa(i) }

// streamRecords reads the records the plan selects, with the fields q
// reads, into acc.
func (s *Store) streamRecords(ctx context.Context, q *store.AggQuery, p *plan, filter arcql.Expr, acc *store.Accumulator) error {
	proj := projection(filter, nil)
	for _, f := range q.ReadFields() {
		if !strings.HasPrefix(f, "core.") {
			proj = append(proj, bson.E{Key: fFields + "." + escapeKey(f), Value: 1})
		}
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.findRecords(octx, findCommand{filter: p.filter, projection: proj})
	if err != nil {
		return s.fail(ctx, "aggregate", err)
	}
	defer cur.Close(context.WithoutCancel(octx))
	for cur.Next(octx) {
		r, err := s.readRecord(ctx, cur)
		if err != nil {
			return err
		}
		if (r.Trashed != nil && !q.IncludeTrashed) || !arcql.Match(filter, r) {
			continue
		}
		if err := acc.Add(r); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return s.fail(ctx, "aggregate", err)
	}
	return nil
}
