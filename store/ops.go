package store

import (
	"fmt"
	"slices"
)

// PrepareOps checks the ops of a Write and returns the copies a store
// applies, so that every store refuses and fills in alike:
//   - every op names a type and has a known kind;
//   - OpDelete, OpTrash and OpUntrash name an id, OpAddRef and OpRemoveRef
//     an id and a field;
//   - an OpUpsert without an ID gets a new one (NewID), and its Set is
//     replaced by a new map of normalized values (NormalizeValue), so that
//     a caller changing its map afterwards changes nothing written.
//
// The error names the first op that fails by index and type. ops itself is
// not modified. A store may check more (names it cannot store, values it
// cannot represent) on the result.
func PrepareOps(ops []Op) ([]Op, error) {
	prepared := make([]Op, len(ops))
	for i, op := range ops {
		if op.Type == "" {
			return nil, fmt.Errorf("store: op %d: empty type", i)
		}
		switch op.Kind {
		case OpUpsert:
			if op.ID == "" {
				op.ID = NewID()
			}
			set := make(map[string]any, len(op.Set))
			for k, v := range op.Set {
				n, err := NormalizeValue(k, v)
				if err != nil {
					return nil, fmt.Errorf("store: op %d (%s): %w", i, op.Type, err)
				}
				set[k] = n
			}
			op.Set = set
		case OpDelete, OpTrash, OpUntrash:
			if op.ID == "" {
				return nil, fmt.Errorf("store: op %d (%s): empty id", i, op.Type)
			}
		case OpAddRef, OpRemoveRef:
			if op.ID == "" || op.Field == "" {
				return nil, fmt.Errorf("store: op %d (%s): empty id or field", i, op.Type)
			}
		default:
			return nil, fmt.Errorf("store: op %d: unknown kind %d", i, op.Kind)
		}
		prepared[i] = op
	}
	return prepared, nil
}

// EditRefs is what an OpAddRef or OpRemoveRef op does to the list its field
// holds: list with op.RefID appended unless present (OpAddRef), or with
// every occurrence of it removed (OpRemoveRef). changed reports a
// difference; list itself is never modified.
func (op *Op) EditRefs(list []any) (next []any, changed bool) {
	has := slices.Contains(list, any(op.RefID))
	if op.Kind == OpAddRef {
		if has {
			return list, false
		}
		next = make([]any, len(list), len(list)+1)
		copy(next, list)
		return append(next, op.RefID), true
	}
	if !has {
		return list, false
	}
	next = make([]any, 0, len(list))
	for _, v := range list {
		if v != op.RefID {
			next = append(next, v)
		}
	}
	return next, true
}
