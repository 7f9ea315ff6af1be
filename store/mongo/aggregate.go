package mongo

import (
	"context"
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Aggregate computes a query's groups from one MongoDB query: the filter
// runs on the server as Find's does (on the instance's indexes), only the
// fields the filter, the groups and the aggregates read are sent back, and
// each record is checked with arcql.Match and handed to a
// store.Accumulator as the cursor streams: memory holds the groups, never
// the records. (A $group pipeline would move the arithmetic to the
// server too; the results must then match the embedded store's exactly,
// kinds of sums and cross-kind min/max included, which the accumulator
// gives for free.)
func (s *Store) Aggregate(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, error) {
	if q == nil {
		return nil, errors.New("mongo: aggregate without a query")
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	if err := checkName("instance", inst); err != nil {
		return nil, err
	}
	acc := store.NewAccumulator(q)
	if checkName("type", q.Type) != nil {
		return acc.Groups(), nil
	}
	filter, err := store.ResolveHops(ctx, s, inst, q.Filter, s.cfg.HopLimit)
	if err != nil {
		return nil, err
	}
	p, err := buildPlan(inst, &store.Query{Type: q.Type, IncludeTrashed: q.IncludeTrashed}, filter, nil, nil)
	if err != nil {
		return nil, err
	}
	if p.none {
		return acc.Groups(), nil
	}
	proj := projection(filter, nil)
	for _, f := range q.ReadFields() {
		if !strings.HasPrefix(f, "core.") {
			proj = append(proj, bson.E{Key: fFields + "." + escapeKey(f), Value: 1})
		}
	}
	octx, cancel := s.op(ctx)
	defer cancel()
	cur, err := s.records.Find(octx, p.filter, options.Find().SetProjection(proj))
	if err != nil {
		return nil, s.fail(ctx, "aggregate", err)
	}
	defer cur.Close(context.WithoutCancel(octx))
	for cur.Next(octx) {
		var doc bson.M
		if err := cur.Decode(&doc); err != nil {
			return nil, s.fail(ctx, "decoding a record", err)
		}
		r, err := decodeRecord(doc)
		if err != nil {
			return nil, err
		}
		if (r.Trashed != nil && !q.IncludeTrashed) || !arcql.Match(filter, r) {
			continue
		}
		if err := acc.Add(r); err != nil {
			return nil, err
		}
	}
	if err := cur.Err(); err != nil {
		return nil, s.fail(ctx, "aggregate", err)
	}
	return acc.Groups(), nil
}
