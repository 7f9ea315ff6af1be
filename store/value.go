package store

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// MaxDepth bounds the nesting of lists and objects in a field value:
// NormalizeValue refuses a deeper one, so that no store has to encode,
// decode or walk a value without bound.
const MaxDepth = 64

// NormalizeValue returns a deep copy of v in the value types of Record
// (string, int64, float64, bool, nil, []any, map[string]any), converting
// the other Go types a caller may reasonably hand over: other integer and
// float types (an unsigned integer beyond int64 becomes a float64),
// json.Number, []string, []map[string]any and map[string]string. The copy
// means a caller changing its input afterwards cannot change what was
// written. Other types, and values nested deeper than MaxDepth, are an
// error naming the field. Both stores normalize every value of an
// OpUpsert's Set this way (see PrepareOps), so that they accept the same
// values.
func NormalizeValue(field string, v any) (any, error) {
	return normalize(field, v, 0)
}

func normalize(field string, v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("store: field %s: value nested deeper than %d levels", field, MaxDepth)
	}
	switch v := v.(type) {
	case nil, bool, int64, float64, string:
		return v, nil
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint:
		return normalize(field, uint64(v), depth)
	case uint64:
		if v > math.MaxInt64 {
			return float64(v), nil
		}
		return int64(v), nil
	case float32:
		return float64(v), nil
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("store: field %s: %w", field, err)
		}
		return f, nil
	case []any:
		return normalizeList(field, v, depth)
	case []map[string]any:
		return normalizeList(field, v, depth)
	case []string:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = e
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			n, err := normalize(field, e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case map[string]string:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("store: field %s: unsupported value type %T", field, v)
}

// normalizeList normalizes the elements of a list, one level deeper.
func normalizeList[E any](field string, l []E, depth int) ([]any, error) {
	out := make([]any, len(l))
	for i, e := range l {
		n, err := normalize(field, e, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// MapValue returns a deep copy of a record value: lists and objects are
// copied, and every other value is leaf(value), or the value itself when
// leaf is nil. A caller given the copy shares nothing with v.
func MapValue(v any, leaf func(any) any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = MapValue(e, leaf)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = MapValue(e, leaf)
		}
		return out
	}
	if leaf == nil {
		return v
	}
	return leaf(v)
}

// Strings returns the strings of a list field value ([]any), in order:
// the ids of a list reference, the names of a list of String. Elements
// that are not strings are left out; a value that is not a list gives none.
func Strings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
