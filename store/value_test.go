package store

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"int", 7, int64(7)},
		{"int32", int32(-7), int64(-7)},
		{"uint8", uint8(7), int64(7)},
		{"uint", uint(7), int64(7)},
		{"huge uint64", uint64(math.MaxUint64), float64(math.MaxUint64)},
		{"float32", float32(0.5), 0.5},
		{"json integer", json.Number("12"), int64(12)},
		{"json float", json.Number("1.5e3"), 1500.0},
		{"strings", []string{"a", "b"}, []any{"a", "b"}},
		{"objects", []map[string]any{{"a": 1}}, []any{map[string]any{"a": int64(1)}}},
		{"string map", map[string]string{"k": "v"}, map[string]any{"k": "v"}},
		{"nested", map[string]any{"l": []any{int16(1), nil}}, map[string]any{"l": []any{int64(1), nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeValue("f", tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	// (Not in the table: cmp.Diff takes exponential time on deep nesting.)
	if _, err := NormalizeValue("f", nest(MaxDepth)); err != nil {
		t.Errorf("a value nested MaxDepth deep: %v", err)
	}
	for _, bad := range []any{struct{}{}, time.Now(), []int{1}, map[int]any{}, make(chan int), json.Number("1e400"), nest(MaxDepth + 1)} {
		if _, err := NormalizeValue("f", bad); err == nil {
			t.Errorf("NormalizeValue(%T) accepted", bad)
		}
	}
}

// TestNormalizeValueCopies checks that changing the input after
// normalizing it leaves the result alone.
func TestNormalizeValueCopies(t *testing.T) {
	t.Parallel()
	in := map[string]any{"l": []any{"a"}, "o": map[string]any{"k": "v"}}
	got, err := NormalizeValue("f", in)
	if err != nil {
		t.Fatal(err)
	}
	in["l"].([]any)[0] = "changed"
	in["o"].(map[string]any)["k"] = "changed"
	in["new"] = true
	want := map[string]any{"l": []any{"a"}, "o": map[string]any{"k": "v"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// nest is a value of n lists, one inside the other, around a string.
func nest(n int) any {
	var v any = "x"
	for range n {
		v = []any{v}
	}
	return v
}

func TestPrepareOps(t *testing.T) {
	t.Parallel()
	in := []Op{
		{Kind: OpUpsert, Type: "Book", Set: map[string]any{"n": 1, "tags": []string{"a"}}},
		{Kind: OpUpsert, Type: "Book", ID: "b1"},
		{Kind: OpDelete, Type: "Book", ID: "b2"},
		{Kind: OpAddRef, Type: "Author", ID: "a1", Field: "books", RefID: "b1"},
	}
	got, err := PrepareOps(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got[0].ID) != IDLen {
		t.Errorf("upsert without an id got id %q", got[0].ID)
	}
	if in[0].ID != "" {
		t.Error("PrepareOps changed its input")
	}
	want := []Op{
		{Kind: OpUpsert, Type: "Book", ID: got[0].ID, New: true, Set: map[string]any{"n": int64(1), "tags": []any{"a"}}},
		{Kind: OpUpsert, Type: "Book", ID: "b1", Set: map[string]any{}},
		in[2],
		in[3],
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestPrepareOpsRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		op   Op
		want string
	}{
		{"empty type", Op{Kind: OpUpsert}, "store: op 1: empty type"},
		{"unknown kind", Op{Kind: 99, Type: "A", ID: "1"}, "store: op 1: unknown kind 99"},
		{"delete without id", Op{Kind: OpDelete, Type: "A"}, "store: op 1 (A): empty id"},
		{"trash without id", Op{Kind: OpTrash, Type: "A"}, "store: op 1 (A): empty id"},
		{"ref op without field", Op{Kind: OpAddRef, Type: "A", ID: "1", RefID: "x"}, "store: op 1 (A): empty id or field"},
		{"ref op without id", Op{Kind: OpRemoveRef, Type: "A", Field: "f", RefID: "x"}, "store: op 1 (A): empty id or field"},
		{"unsupported value", Op{Kind: OpUpsert, Type: "A", Set: map[string]any{"x": struct{}{}}},
			"store: op 1 (A): store: field x: unsupported value type struct {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := []Op{{Kind: OpDelete, Type: "A", ID: "ok"}, tt.op}
			got, err := PrepareOps(ops)
			if err == nil {
				t.Fatalf("PrepareOps accepted %+v: %+v", tt.op, got)
			}
			if err.Error() != tt.want {
				t.Errorf("err = %q, want %q", err, tt.want)
			}
		})
	}
}

func TestEditRefs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		kind        OpKind
		list        []any
		want        []any
		wantChanged bool
	}{
		{"add to nothing", OpAddRef, nil, []any{"x"}, true},
		{"add", OpAddRef, []any{"a"}, []any{"a", "x"}, true},
		{"add present", OpAddRef, []any{"x", "a"}, []any{"x", "a"}, false},
		{"remove every occurrence", OpRemoveRef, []any{"x", "a", "x"}, []any{"a"}, true},
		{"remove the last", OpRemoveRef, []any{"x"}, []any{}, true},
		{"remove absent", OpRemoveRef, []any{"a"}, []any{"a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := slices.Clone(tt.list)
			op := &Op{Kind: tt.kind, Type: "A", ID: "1", Field: "refs", RefID: "x"}
			got, changed := op.EditRefs(list)
			if d := cmp.Diff(tt.want, got); d != "" || changed != tt.wantChanged {
				t.Errorf("changed %v, want %v; list (-want +got):\n%s", changed, tt.wantChanged, d)
			}
			if !slices.Equal(list, tt.list) {
				t.Errorf("the input list changed to %v", list)
			}
		})
	}
}

func TestHoldLimit(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	later, earlier := now.Add(time.Minute), now.Add(-time.Minute)
	for _, tc := range []struct {
		name string
		h    Hold
		last uint64
		want uint64
	}{
		{"none", Hold{}, 100, math.MaxUint64},
		{"ended", Hold{After: 5, Until: earlier}, 100, math.MaxUint64},
		{"ends now", Hold{After: 5, Until: now}, 100, math.MaxUint64},
		{"held", Hold{After: 5, Until: later}, 100, 5},
		{"at most MaxHeld", Hold{After: 5, Until: later}, MaxHeld + 100, 100},
		{"MaxHeld exactly", Hold{After: 100, Until: later}, MaxHeld + 100, 100},
	} {
		if got := tc.h.Limit(tc.last, now); got != tc.want {
			t.Errorf("%s: Limit = %d, want %d", tc.name, got, tc.want)
		}
	}
}
