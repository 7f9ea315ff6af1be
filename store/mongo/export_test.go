package mongo

import (
	"context"

	"github.com/corehq/core/store"
)

// AggregateReport is Aggregate that also reports whether the server
// grouped, for the tests of package mongo_test.
func (s *Store) AggregateReport(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, bool, error) {
	return s.aggregate(ctx, inst, q)
}
