package mongo

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/corehq/core/store"
)

// validate checks a Write's ops before any applies, following their
// effects through the batch: an upsert that would create a record without
// a required field, or take a unique value that another record holds (or
// that an earlier op of the batch takes), fails the Write with nothing
// written. Without transactions this cannot cover everything: a concurrent
// writer may still take a value between this check and the op (the op then
// fails, after the ops before it applied), and a database failure may stop
// a Write half way. It reads only for ops that need it: upserts missing a
// required field, upserts setting a unique field, math, and ops with Keep
// fields.
func (s *Store) validate(ctx context.Context, inst string, ops []store.Op) error {
	type rec struct{ typ, id string }
	exists := map[rec]bool{}                      // known existence, as of the ops so far
	deleted := map[rec]bool{}                     // deleted by an op so far (and not upserted since)
	holds := map[rec]map[string]map[string]bool{} // field → value keys a record holds, for fields the batch set
	owners := map[string]string{}                 // claim key → record id, as of the ops so far
	touched := map[rec]bool{}                     // written by an op so far
	for i := range ops {
		op := &ops[i]
		r := rec{op.Type, op.ID}
		switch op.Kind {
		case store.OpDelete:
			touched[r] = true
			exists[r] = false
			deleted[r] = true
			delete(holds, r)
			continue
		case store.OpUpsert:
			if err := s.validateKept(ctx, inst, op, touched[r]); err != nil {
				return err
			}
			touched[r] = true
		case store.OpMath, store.OpAddRef, store.OpRemoveRef, store.OpRemoveValues:
			// Math the stored values refuse (not a number, out of range),
			// or an edit of a field the record keeps, fails the Write
			// before any op applies; a concurrent writer can still defeat
			// that, as it can a unique value.
			if op.Kind == store.OpMath || len(op.Keep) > 0 {
				cur, err := s.Get(ctx, inst, op.Type, op.ID)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
				if err == nil {
					if _, err := op.Edit(cur.Fields); err != nil {
						return err
					}
				}
			}
			touched[r] = true
			continue
		default:
			touched[r] = true
			continue
		}
		missing := ""
		for _, f := range op.Required {
			if op.Set[f] == nil {
				missing = f
				break
			}
		}
		if missing != "" {
			e, known := exists[r]
			if !known {
				_, err := s.Get(ctx, inst, op.Type, op.ID)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
				e = err == nil
			}
			if !e {
				return &store.FieldError{Err: store.ErrRequired, Type: op.Type, Field: missing}
			}
		}
		exists[r] = true
		delete(deleted, r)

		ts, err := s.typeState(ctx, inst, op.Type)
		if err != nil {
			return err
		}
		for _, f := range slices.Sorted(maps.Keys(op.Set)) {
			if !ts.unique[f] {
				continue
			}
			values := uniqueValues(op.Set[f])
			if holds[r] == nil {
				holds[r] = map[string]map[string]bool{}
			}
			holds[r][f] = map[string]bool{} // the record gives up its other values of f
			for _, k := range slices.Sorted(maps.Keys(values)) {
				ck := claimKey(inst, op.Type, f, k)
				owner, seen := owners[ck]
				if !seen {
					o, at, err := s.claimOwner(ctx, ck)
					if err != nil {
						return err
					}
					owner = o
					if o != "" && o != op.ID {
						stale, err := s.staleClaim(ctx, inst, op.Type, f, k, o, at)
						if err != nil {
							return err
						}
						if stale {
							owner = ""
						}
					}
				}
				if owner != "" && owner != op.ID {
					// Still held, unless the batch took it from its owner.
					o := rec{op.Type, owner}
					h, set := holds[o][f]
					if !deleted[o] && (!set || h[k]) {
						return &store.FieldError{Err: store.ErrUnique, Type: op.Type, Field: f, Value: values[k]}
					}
				}
				owners[ck] = op.ID
				holds[r][f][k] = true
			}
		}
	}
	return nil
}

// validateKept checks an upsert's Keep fields against its record as
// stored, unless an earlier op of the Write touched the record (the op's
// own check, when it applies, covers that case).
func (s *Store) validateKept(ctx context.Context, inst string, op *store.Op, touched bool) error {
	if touched || !op.SetsKept() {
		return nil
	}
	cur, err := s.Get(ctx, inst, op.Type, op.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return store.CheckKept(op, cur.Fields, op.Set)
}
