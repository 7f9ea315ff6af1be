package store

import (
	"encoding/json"
	"math"
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
