package arcql

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// number is a stored or literal number, kept as an integer when it is one so
// that large int64 values compare exactly.
type number struct {
	isInt bool
	i     int64
	f     float64
}

// toNumber reads any Go numeric type a Valuer may hand over.
func toNumber(x any) (number, bool) {
	switch n := x.(type) {
	case float64:
		return number{f: n}, true
	case int64:
		return number{isInt: true, i: n}, true
	case int:
		return number{isInt: true, i: int64(n)}, true
	case float32:
		return number{f: float64(n)}, true
	case int32:
		return number{isInt: true, i: int64(n)}, true
	case int16:
		return number{isInt: true, i: int64(n)}, true
	case int8:
		return number{isInt: true, i: int64(n)}, true
	case uint8:
		return number{isInt: true, i: int64(n)}, true
	case uint16:
		return number{isInt: true, i: int64(n)}, true
	case uint32:
		return number{isInt: true, i: int64(n)}, true
	case uint:
		return uintNumber(uint64(n)), true
	case uint64:
		return uintNumber(n), true
	}
	return number{}, false
}

// number is a numeric literal's value: exact when it is a whole number
// beyond float64's range of exact integers.
func (v *Value) number() number {
	if v.IsInt {
		return number{isInt: true, i: v.Int}
	}
	return number{f: v.Num}
}

func uintNumber(u uint64) number {
	if u > math.MaxInt64 {
		return number{f: float64(u)}
	}
	return number{isInt: true, i: int64(u)}
}

// appendText appends the number's decimal text, as ^ and * see it:
// strconv.FormatFloat(x, 'f', -1, 64), which never uses an exponent.
func (n number) appendText(buf []byte) []byte {
	if n.isInt {
		return strconv.AppendInt(buf, n.i, 10)
	}
	return strconv.AppendFloat(buf, n.f, 'f', -1, 64)
}

// compareNumbers orders two numbers numerically and exactly, even an int64
// beyond 2^53 against a float64. NaN sorts before every other number so that
// the order stays total.
func compareNumbers(a, b number) int {
	switch {
	case a.isInt && b.isInt:
		return cmpInt(a.i, b.i)
	case a.isInt:
		return -compareFloatInt(b.f, a.i)
	case b.isInt:
		return compareFloatInt(a.f, b.i)
	}
	an, bn := math.IsNaN(a.f), math.IsNaN(b.f)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	case a.f < b.f:
		return -1
	case a.f > b.f:
		return 1
	}
	return 0
}

// compareFloatInt compares f with i without rounding i to a float64.
func compareFloatInt(f float64, i int64) int {
	switch {
	case math.IsNaN(f):
		return -1
	case f >= math.MaxInt64: // 2^63: beyond every int64
		return 1
	case f < math.MinInt64:
		return -1
	}
	t := math.Trunc(f)
	if c := cmpInt(int64(t), i); c != 0 {
		return c
	}
	switch {
	case f > t:
		return 1
	case f < t:
		return -1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Ranks of the kinds of value in the total order of CompareValues.
const (
	rankNull = iota
	rankBool
	rankNumber
	rankString
	rankTime
	rankList
	rankObject
	rankOther
)

func rank(x any) int {
	switch x.(type) {
	case nil:
		return rankNull
	case bool:
		return rankBool
	case string:
		return rankString
	case time.Time:
		return rankTime
	case []any:
		return rankList
	case map[string]any:
		return rankObject
	}
	if _, ok := toNumber(x); ok {
		return rankNumber
	}
	return rankOther
}

// CompareValues is the total order that sorting uses: it returns -1, 0 or +1
// as x sorts before, with or after y. Kinds sort null < booleans < numbers <
// strings < timestamps < lists < objects; within a kind, false < true,
// numbers numerically whatever their Go type, strings bytewise, time.Time
// chronologically, lists element by element and objects by their sorted
// keys and then values. A DateTime field stored as an ISO-8601 string
// compares as a string, which is chronological for the canonical UTC form
// stores write. Values of a type CompareValues does not know compare equal
// to each other.
func CompareValues(x, y any) int {
	rx, ry := rank(x), rank(y)
	if rx != ry {
		return cmpInt(int64(rx), int64(ry))
	}
	switch rx {
	case rankBool:
		bx, by := x.(bool), y.(bool)
		switch {
		case bx == by:
			return 0
		case by:
			return -1
		}
		return 1
	case rankNumber:
		nx, _ := toNumber(x)
		ny, _ := toNumber(y)
		return compareNumbers(nx, ny)
	case rankString:
		return strings.Compare(x.(string), y.(string))
	case rankTime:
		return x.(time.Time).Compare(y.(time.Time))
	case rankList:
		lx, ly := x.([]any), y.([]any)
		for i := 0; i < len(lx) && i < len(ly); i++ {
			if c := CompareValues(lx[i], ly[i]); c != 0 {
				return c
			}
		}
		return cmpInt(int64(len(lx)), int64(len(ly)))
	case rankObject:
		return compareObjects(x.(map[string]any), y.(map[string]any))
	}
	return 0
}

func compareObjects(x, y map[string]any) int {
	kx, ky := sortedKeys(x), sortedKeys(y)
	for i := 0; i < len(kx) && i < len(ky); i++ {
		if c := strings.Compare(kx[i], ky[i]); c != 0 {
			return c
		}
		if c := CompareValues(x[kx[i]], y[ky[i]]); c != 0 {
			return c
		}
	}
	return cmpInt(int64(len(kx)), int64(len(ky)))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CompareSort orders two records by the bound sort keys, returning -1, 0 or
// +1. A record missing a key's value (absent, null, an empty list) sorts
// first in ascending and last in descending order. Ties, and records equal
// on every key, break by core.id ascending so that paging is stable.
func CompareSort(keys []SortKey, a, b Valuer) int {
	for _, k := range keys {
		c := CompareValues(SortValue(a, k.Path), SortValue(b, k.Path))
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	if ia, ok := a.(IDValuer); ok {
		if ib, ok := b.(IDValuer); ok {
			return strings.Compare(ia.IDValue(), ib.IDValue())
		}
	}
	ida, _ := a.Value("core.id")
	idb, _ := b.Value("core.id")
	return CompareValues(ida, idb)
}

// An IDValuer is a Valuer that also gives its "core.id" as a string
// without boxing it, for the tie-break of CompareSort.
type IDValuer interface {
	Valuer
	IDValue() string
}

// SortValue is the one value a record sorts by at path p, the one
// CompareSort compares: nil when missing, null or an empty list. It
// descends through objects only; a list part-way down has no single value
// to sort by, so it counts as missing (Bind rejects sorting on list fields;
// only a Json value can hold such a list). A store that pages by sort
// values uses it to read a cursor record's.
func SortValue(v Valuer, p Path) any {
	x, rest, ok := root(v, p)
	if !ok {
		return nil
	}
	for _, part := range rest {
		m, ok := x.(map[string]any)
		if !ok {
			return nil
		}
		x = m[part]
	}
	if l, ok := x.([]any); ok && len(l) == 0 {
		return nil
	}
	return x
}
