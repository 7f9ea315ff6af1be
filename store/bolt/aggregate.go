package bolt

import (
	"context"
	"errors"
	"slices"

	"github.com/corehq/core/store"
)

// Aggregate computes a query's groups in one pass over the records its
// filter selects, planned like Find (an index on the filter's fields is
// used) and read in one transaction. Each record is decoded with only the
// fields the filter, the groups and the aggregates read, handed to a
// store.Accumulator and dropped: memory holds the groups (and the
// distinct values asked for), never the records; a plan that collects
// ids from several index ranges holds those ids.
func (s *Store) Aggregate(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q == nil {
		return nil, errors.New("bolt: aggregate without a query")
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	filter, err := store.ResolveHops(ctx, s, inst, q.Filter, s.cfg.HopLimit)
	if err != nil {
		return nil, err
	}
	acc := store.NewAccumulator(q)
	fq := &store.Query{Type: q.Type, Filter: filter, IncludeTrashed: q.IncludeTrashed}
	var info planInfo
	err = s.run(ctx, inst, fq, filter, &info, func(e *exec) error {
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
		return nil, err
	}
	return acc.Groups(), nil
}
