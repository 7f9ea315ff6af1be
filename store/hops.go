package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
// The hops of an OR through one reference field are resolved as one
// sub-query with the OR of their sub-filters (mergeHops), bounded by max
// times their number.
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
		or, bounds := mergeHops(n)
		terms := make([]arcql.Expr, len(or.Terms))
		changed := or != n
		for i, t := range or.Terms {
			var err error
			if h, ok := t.(*arcql.Hop); ok {
				terms[i], err = resolveHop(ctx, s, inst, h, max, bounds[i]*max, prefix)
			} else {
				terms[i], err = resolveHops(ctx, s, inst, t, max, prefix)
			}
			if err != nil {
				return nil, err
			}
			changed = changed || terms[i] != t
		}
		if !changed {
			return e, nil
		}
		return &arcql.Or{Terms: terms}, nil
	case *arcql.Not:
		x, err := resolveHops(ctx, s, inst, n.X, max, prefix)
		if err != nil || x == n.X {
			return e, err
		}
		return &arcql.Not{X: x}, nil
	case *arcql.Hop:
		return resolveHop(ctx, s, inst, n, max, max, prefix)
	}
	return e, nil
}

// resolveHop resolves one hop into the ids of the target records its
// sub-filter matches, at most bound of them; its nested hops are bounded
// by max.
func resolveHop(ctx context.Context, s Store, inst string, n *arcql.Hop, max, bound int, prefix string) (arcql.Expr, error) {
	path := n.Field
	if prefix != "" {
		path = prefix + "." + n.Field
	}
	sub, err := resolveHops(ctx, s, inst, n.Sub, max, path)
	if err != nil {
		return nil, err
	}
	recs, err := s.Find(ctx, inst, &Query{Type: n.Target, Filter: sub, Limit: bound + 1, IDsOnly: true})
	if err != nil {
		return nil, fmt.Errorf("reference filter on %s: %w", path, err)
	}
	if len(recs) > bound {
		return nil, fmt.Errorf("reference filter on %s matches more than %d %s records: %w",
			path, bound, n.Target, ErrTooMany)
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return arcql.NewInIDs(n.Field, ids), nil
}

// mergeHops joins the hops of an OR through one reference field into one
// hop whose sub-filter is the OR of theirs (board.team.x = 1 OR
// board.core.createdBy = 2 reads the boards once: "board IN the boards of
// either"), so that a rule or filter costs one sub-query per field rather
// than per term; the terms keep their order, a merged hop standing where
// the first of its hops stood. bounds[i] is how many hops term i joins: a
// merged hop may match as many records as its hops could together, so no
// filter that resolved before fails now. An OR without two such hops is
// returned as it is.
func mergeHops(n *arcql.Or) (*arcql.Or, []int) {
	var terms []arcql.Expr
	subs := map[int][]arcql.Expr{} // index in terms of a hop → the sub-filters it joins
	first := map[string]int{}      // field → index in terms of its hop
	merged := false
	for _, t := range n.Terms {
		if h, ok := t.(*arcql.Hop); ok {
			if i, seen := first[h.Field]; seen && terms[i].(*arcql.Hop).Target == h.Target {
				subs[i] = append(subs[i], h.Sub)
				merged = true
				continue
			}
			first[h.Field] = len(terms)
			subs[len(terms)] = []arcql.Expr{h.Sub}
		}
		terms = append(terms, t)
	}
	bounds := make([]int, len(terms))
	for i := range terms {
		bounds[i] = max(1, len(subs[i]))
	}
	if !merged {
		return n, bounds
	}
	for i, joined := range subs {
		if len(joined) < 2 {
			continue
		}
		h := terms[i].(*arcql.Hop)
		var sub arcql.Expr = &arcql.Or{Terms: joined}
		if slices.Contains(joined, nil) { // a hop without a sub-filter: any target record
			sub = nil
		}
		terms[i] = &arcql.Hop{Field: h.Field, List: h.List, Target: h.Target, Sub: sub}
	}
	return &arcql.Or{Terms: terms}, bounds
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
