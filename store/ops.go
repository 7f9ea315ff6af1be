package store

import (
	"fmt"
	"maps"
	"slices"
)

// PrepareOps checks the ops of a Write and returns the copies a store
// applies, so that every store refuses and fills in alike:
//   - every op names a type and has a known kind;
//   - OpDelete, OpTrash and OpUntrash name an id, OpAddRef and OpRemoveRef
//     an id and a field;
//   - an OpUpsert without an ID gets a new one (NewID) and New, and its Set is
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
				op.ID, op.New = NewID(), true
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
		case OpRemoveValues:
			if op.ID == "" || op.Field == "" {
				return nil, fmt.Errorf("store: op %d (%s): empty id or field", i, op.Type)
			}
			vals := make([]any, len(op.Values))
			for j, v := range op.Values {
				n, err := NormalizeValue(op.Field, v)
				if err != nil {
					return nil, fmt.Errorf("store: op %d (%s): %w", i, op.Type, err)
				}
				vals[j] = n
			}
			op.Values = vals
		case OpMath:
			if op.ID == "" || len(op.Math) == 0 {
				return nil, fmt.Errorf("store: op %d (%s): empty id or no field", i, op.Type)
			}
			for f, a := range op.Math {
				if err := a.check(); err != nil {
					return nil, fmt.Errorf("store: op %d (%s): field %s: %w", i, op.Type, f, err)
				}
			}
		default:
			return nil, fmt.Errorf("store: op %d: unknown kind %d", i, op.Kind)
		}
		prepared[i] = op
	}
	return prepared, nil
}

// Edit is what an edit op (OpKind.IsEdit) does to a record's fields: the
// fields it changes, with their new values (none when nothing differs).
// fields itself is never modified. An OpMath on a value it cannot compute
// (not a number, out of range) is a *FieldError wrapping ErrArith; a
// change of a field in op.Keep one wrapping ErrImmutable.
func (op *Op) Edit(fields map[string]any) (map[string]any, error) {
	set, err := op.edit(fields)
	if err == nil {
		err = CheckKept(op, fields, set)
	}
	if err != nil {
		return nil, err
	}
	return set, nil
}

// edit is Edit but for op.Keep.
func (op *Op) edit(fields map[string]any) (map[string]any, error) {
	switch op.Kind {
	case OpAddRef, OpRemoveRef:
		list, ok := fields[op.Field].([]any)
		if !ok && fields[op.Field] != nil {
			return nil, fmt.Errorf("store: %s/%s: field %s is not a list", op.Type, op.ID, op.Field)
		}
		if next, changed := op.EditRefs(list); changed {
			return map[string]any{op.Field: next}, nil
		}
	case OpRemoveValues:
		list, ok := fields[op.Field].([]any)
		if !ok && fields[op.Field] != nil {
			return nil, fmt.Errorf("store: %s/%s: field %s is not a list", op.Type, op.ID, op.Field)
		}
		next := make([]any, 0, len(list))
		for _, v := range list {
			if !slices.ContainsFunc(op.Values, func(x any) bool { return SameValue(x, v) }) {
				next = append(next, v)
			}
		}
		if len(next) != len(list) {
			return map[string]any{op.Field: next}, nil
		}
	case OpMath:
		out := map[string]any{}
		for f, a := range op.Math {
			v, err := a.Apply(fields[f])
			if err != nil {
				return nil, &FieldError{Err: err, Type: op.Type, Field: f}
			}
			if !SameValue(fields[f], v) {
				out[f] = v
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, nil
}

// EditedFields are the fields an edit op may change.
func (op *Op) EditedFields() []string {
	if op.Kind == OpMath {
		return slices.Sorted(maps.Keys(op.Math))
	}
	return []string{op.Field}
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

// CheckKept returns the *FieldError wrapping ErrImmutable of the first
// field of op.Keep that set, the fields the op writes to an existing
// record whose fields are old, would change (Op.Keep); nil when none.
func CheckKept(op *Op, old, set map[string]any) error {
	for _, f := range op.Keep {
		if v, ok := set[f]; ok && !SameValue(old[f], v) {
			return &FieldError{Err: ErrImmutable, Type: op.Type, Field: f}
		}
	}
	return nil
}

// SetsKept reports whether an upsert sets a field of op.Keep, so that a
// store has something to check (CheckKept).
func (op *Op) SetsKept() bool {
	return slices.ContainsFunc(op.Keep, func(f string) bool { _, ok := op.Set[f]; return ok })
}
