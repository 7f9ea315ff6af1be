package bolt

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// keyValues are scalar values of every kind, in no particular order.
var keyValues = []any{
	nil, false, true,
	math.Inf(-1), -1e300, int64(math.MinInt64 + 1), -2.5, int64(-2), -1.0, -math.SmallestNonzeroFloat64,
	0.0, math.Copysign(0, -1), int64(0), math.SmallestNonzeroFloat64, 0.5, int64(1), 1.5, int64(2), 1e15,
	int64(1 << 53), 1e300, math.Inf(1),
	"", "\x00", "\x00\x00", "\x00\x01", "\x01", "a", "a\x00", "a\x00b", "a\x01", "ab", "b", "\xff", "\xff\xff",
	base, base.Add(time.Nanosecond), base.Add(-time.Hour), time.Unix(-1e10, 5).UTC(),
}

// TestKeyOrderIsCompareValuesOrder is the property sort-by-index relies
// on: keys compare as arcql.CompareValues compares their values.
func TestKeyOrderIsCompareValuesOrder(t *testing.T) {
	for _, a := range keyValues {
		for _, b := range keyValues {
			ka, kb := appendKeyValue(nil, a), appendKeyValue(nil, b)
			if got, want := bytes.Compare(ka, kb), arcql.CompareValues(a, b); got != want {
				t.Errorf("keys of %#v and %#v compare %d, values %d", a, b, got, want)
			}
		}
	}
}

// TestKeyOrderWithIDs checks whole entry keys: the value order first, then
// the id, with ids and string values holding 0x00.
func TestKeyOrderWithIDs(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	ids := []string{"", "a", "a\x00", "a\x00\x00", "ab", "b"}
	for range 5000 {
		a, b := keyValues[rnd.IntN(len(keyValues))], keyValues[rnd.IntN(len(keyValues))]
		ia, ib := ids[rnd.IntN(len(ids))], ids[rnd.IntN(len(ids))]
		ka := appendEscaped(appendKeyValue(nil, a), ia)
		kb := appendEscaped(appendKeyValue(nil, b), ib)
		want := arcql.CompareValues(a, b)
		if want == 0 {
			want = arcql.CompareValues(ia, ib)
		}
		if got := bytes.Compare(ka, kb); got != want {
			t.Fatalf("(%#v, %q) vs (%#v, %q): keys compare %d, want %d", a, ia, b, ib, got, want)
		}
		if id, ok := entryID(ka, 1); !ok || string(id) != ia {
			t.Fatalf("entryID(%x) = %q, %v; want %q", ka, id, ok, ia)
		}
	}
}

func TestFieldLeaves(t *testing.T) {
	r := &store.Record{ID: "x", Created: base, Fields: map[string]any{
		"s":     "a",
		"list":  []any{"b", "a", "b", nil},
		"empty": []any{},
		"null":  nil,
		"obj":   map[string]any{"k": []any{map[string]any{"z": int64(1)}, map[string]any{"z": 2.0}}},
		"deep":  []any{[]any{"c"}},
	}}
	tests := []struct {
		field string
		want  []any
		list  bool
	}{
		{"s", []any{"a"}, false},
		{"list", []any{"b", "a", nil}, true},
		{"empty", []any{nil}, true},
		{"null", []any{nil}, false},
		{"missing", []any{nil}, false},
		{"obj", []any{map[string]any{}}, false},
		{"obj.k.z", []any{int64(1), 2.0}, true},
		{"obj.nope", []any{nil}, false},
		{"deep", []any{"c"}, true},
		{"core.created", []any{base}, false},
		{"core.trashed", []any{nil}, false},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			var want [][]byte
			for _, v := range tt.want {
				want = append(want, appendKeyValue(nil, v))
			}
			got, list := fieldLeaves(r, tt.field)
			if d := cmp.Diff(want, got); d != "" || list != tt.list {
				t.Errorf("list %v, want %v; keys (-want +got):\n%s", list, tt.list, d)
			}
		})
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ in, want []byte }{
		{[]byte{1, 2}, []byte{1, 3}},
		{[]byte{1, 0xff}, []byte{2}},
		{[]byte{0xff, 0xff}, nil},
	}
	for _, tt := range tests {
		if got := prefixEnd(tt.in); !bytes.Equal(got, tt.want) {
			t.Errorf("prefixEnd(%x) = %x, want %x", tt.in, got, tt.want)
		}
	}
}
