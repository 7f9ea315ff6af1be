package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/corehq/core/store/arcql"
)

// ResolveHops returns e with every *arcql.Hop replaced by an *arcql.InIDs
// naming the records of the hop's target type that its sub-filter matches,
// found with s.Find in instance inst. Nested hops resolve innermost first.
// Both stores call it at the top of Find, so a store's own evaluator never
// meets a Hop.
//
// Each sub-query may match at most max records; more is an error wrapping
// ErrTooMany that names the path ("reference filter on bestbook matches
// more than 10000 Book records"), so that a hop never turns into an unbounded
// scan. max must be positive.
//
// Trashed target records are excluded, as in any query without
// IncludeTrashed: a reference to a trashed record does not satisfy
// `bestbook.title = 'x'` (and does satisfy its negation), just as the
// trashed record is hidden when read.
//
// e is never modified; subtrees without hops are shared with the result, and
// e itself is returned when it holds no hop.
func ResolveHops(ctx context.Context, s Store, inst string, e arcql.Expr, max int) (arcql.Expr, error) {
	if max <= 0 {
		return nil, errors.New("store: hop bound must be positive")
	}
	return resolveHops(ctx, s, inst, e, max, "")
}

// resolveHops does the work of ResolveHops; prefix is the dotted path of the
// hops above e, for the error message.
func resolveHops(ctx context.Context, s Store, inst string, e arcql.Expr, max int, prefix string) (arcql.Expr, error) {
	switch n := e.(type) {
	case *arcql.And:
		terms, changed, err := resolveTerms(ctx, s, inst, n.Terms, max, prefix)
		if err != nil || !changed {
			return e, err
		}
		return &arcql.And{Terms: terms}, nil
	case *arcql.Or:
		terms, changed, err := resolveTerms(ctx, s, inst, n.Terms, max, prefix)
		if err != nil || !changed {
			return e, err
		}
		return &arcql.Or{Terms: terms}, nil
	case *arcql.Not:
		x, err := resolveHops(ctx, s, inst, n.X, max, prefix)
		if err != nil || x == n.X {
			return e, err
		}
		return &arcql.Not{X: x}, nil
	case *arcql.Hop:
		path := n.Field
		if prefix != "" {
			path = prefix + "." + n.Field
		}
		sub, err := resolveHops(ctx, s, inst, n.Sub, max, path)
		if err != nil {
			return nil, err
		}
		recs, err := s.Find(ctx, inst, &Query{Type: n.Target, Filter: sub, Limit: max + 1, IDsOnly: true})
		if err != nil {
			return nil, fmt.Errorf("reference filter on %s: %w", path, err)
		}
		if len(recs) > max {
			return nil, fmt.Errorf("reference filter on %s matches more than %d %s records: %w",
				path, max, n.Target, ErrTooMany)
		}
		ids := make([]string, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		return arcql.NewInIDs(n.Field, ids), nil
	}
	return e, nil
}

// resolveTerms resolves each term; changed reports whether any term
// changed, so that an unchanged And or Or is shared rather than copied.
func resolveTerms(ctx context.Context, s Store, inst string, terms []arcql.Expr, max int, prefix string) ([]arcql.Expr, bool, error) {
	var out []arcql.Expr
	for i, t := range terms {
		r, err := resolveHops(ctx, s, inst, t, max, prefix)
		if err != nil {
			return nil, false, err
		}
		if r != t && out == nil {
			out = make([]arcql.Expr, len(terms))
			copy(out, terms[:i])
		}
		if out != nil {
			out[i] = r
		}
	}
	return out, out != nil, nil
}
