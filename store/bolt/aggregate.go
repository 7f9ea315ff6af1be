package bolt

import (
	"context"
	"errors"
	"slices"

	"github.com/corehq/core/store"
)

// Aggregate computes a query's groups in one pass, in one read
// transaction. When one index holds every field the query reads, its
// entries alone are read (aggregate_index.go). Otherwise the records the
// filter selects are planned like Find (an index on the filter's fields
// is used), each decoded with only the fields the filter, the groups and
// the aggregates read, handed to a store.Accumulator and dropped: memory
// holds the groups (and the distinct values asked for), never the
// records; a plan that collects ids from several index ranges holds those
// ids.
func (s *Store) Aggregate(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, error) {
	gs, _, err := s.aggregate(ctx, inst, q)
	return gs, err
}

// aggregate is Aggregate that also reports the plan it ran (for tests).
func (s *Store) aggregate(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, planInfo, error) {
	var info planInfo
	if err := ctx.Err(); err != nil {
		return nil, info, err
	}
	if q == nil {
		return nil, info, errors.New("bolt: aggregate without a query")
	}
	if err := q.Check(); err != nil {
		return nil, info, err
	}
	filter, err := store.ResolveHops(ctx, s, inst, q.Filter, s.cfg.HopLimit)
	if err != nil {
		return nil, info, err
	}
	acc := store.NewAccumulator(q)
	defer acc.Release()
	fq := &store.Query{Type: q.Type, Filter: filter, IncludeTrashed: q.IncludeTrashed}
	err = s.run(ctx, inst, fq, filter, &info, func(e *exec) error {
		if isNever(e.filter) {
			info.Kind = planNone
			return nil
		}
		if x, b := e.coveringIndex(q, filter); x != nil {
			info.Kind, info.Index = planIndexOnly, x.Name
			return e.aggregateIndex(q, x, b, acc)
		}
		for _, f := range q.ReadFields() {
			if !slices.Contains(e.only, f) {
				e.only = append(e.only, f)
			}
		}
		e.visit = acc.Add
		_, err := e.run()
		return err
	})
	if err != nil {
		return nil, info, err
	}
	return acc.Groups(), info, nil
}
