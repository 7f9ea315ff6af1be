package bolt

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestLongStringKeys checks strings longer than maxKeyString: their keys
// are truncated, never out of order, and unique indexes still compare the
// whole values.
func TestLongStringKeys(t *testing.T) {
	prefix := strings.Repeat("p", maxKeyString+100)
	long := []string{prefix + "b", prefix + "a", prefix, prefix + "a\x00", strings.Repeat("q", 40000), prefix[:maxKeyString]}
	t.Run("order", func(t *testing.T) {
		vals := append(append([]any{}, keyValues...), "p", "pq")
		for _, s := range long {
			vals = append(vals, s)
		}
		for _, a := range vals {
			for _, b := range vals {
				kc := bytes.Compare(appendKeyValue(nil, a), appendKeyValue(nil, b))
				if vc := arcql.CompareValues(a, b); kc != 0 && kc != vc {
					t.Errorf("keys of %.20q and %.20q compare %d, values %d", a, b, kc, vc)
				}
			}
		}
	})

	ctx := context.Background()
	s := openTemp(t, testConfig())
	if err := s.Declare(ctx, "i", []store.TypeSpec{{Name: "Item", Unique: []string{"title"}}}); err != nil {
		t.Fatal(err)
	}
	var ops []store.Op
	for i, v := range long {
		ops = append(ops, store.Op{Kind: store.OpUpsert, Type: "Item", ID: itemID(i), Set: map[string]any{"title": v}})
	}
	if _, err := s.Write(ctx, "i", ops, store.Quota{}); err != nil {
		t.Fatalf("distinct long values sharing a prefix: %v", err)
	}
	t.Run("unique", func(t *testing.T) {
		_, err := s.Write(ctx, "i", []store.Op{{Kind: store.OpUpsert, Type: "Item", ID: "dup", Set: map[string]any{"title": long[1]}}}, store.Quota{})
		var fe *store.FieldError
		if !errors.As(err, &fe) || fe.Value != long[1] {
			t.Errorf("duplicate long value: %v", err)
		}
		// Becoming unique over long values compares whole values too.
		if err := s.Declare(ctx, "i", []store.TypeSpec{{Name: "Item", Indices: [][]string{{"title"}}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Declare(ctx, "i", []store.TypeSpec{{Name: "Item", Unique: []string{"title"}}}); err != nil {
			t.Errorf("distinct long values refused by a new unique index: %v", err)
		}
	})
	t.Run("queries", func(t *testing.T) {
		title := arcql.Path{Parts: []string{"title"}}
		cmpq := func(op arcql.Op, v string) *store.Query {
			return &store.Query{Type: "Item", Filter: &arcql.Compare{Path: title, Op: op, Value: arcql.Value{Kind: arcql.KindString, Str: v}}}
		}
		for _, q := range []*store.Query{
			cmpq(arcql.OpEq, long[0]),
			cmpq(arcql.OpEq, long[2]),
			cmpq(arcql.OpGt, long[2]),
			cmpq(arcql.OpLt, long[0]),
			cmpq(arcql.OpGe, prefix[:maxKeyString]),
			cmpq(arcql.OpPrefix, prefix+"a"),
			{Type: "Item", Sort: []arcql.SortKey{{Path: title, Desc: true}}},
			{Type: "Item", Sort: []arcql.SortKey{{Path: title}}},
		} {
			text := arcql.Format(q.Filter)
			recs, err := s.Find(ctx, "i", q)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := s.Find(ctx, "i", &store.Query{Type: "Item"})
			var want []string
			for _, r := range all {
				if arcql.Match(q.Filter, r) {
					want = append(want, r.ID)
				}
			}
			if len(q.Sort) > 0 {
				slices.SortFunc(all, func(a, b *store.Record) int { return arcql.CompareSort(q.Sort, a, b) })
				want = ids(all)
			}
			if d := cmp.Diff(want, ids(recs)); d != "" {
				t.Errorf("%.60s… (-want +got):\n%s", text, d)
			}
		}
	})
}
