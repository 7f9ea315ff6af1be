package bolt

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
)

func TestCodecRoundTrip(t *testing.T) {
	trashed := time.Date(2026, 2, 3, 4, 5, 6, 789, time.UTC)
	tests := []struct {
		name string
		rec  *store.Record
	}{
		{"empty", &store.Record{Type: "T", ID: "1", Fields: map[string]any{}}},
		{"metadata", &store.Record{
			Type: "T", ID: "2", Created: base, Updated: base.Add(time.Nanosecond), Trashed: &trashed,
			CreatedBy: "acc", Impl: "Impl", Fields: map[string]any{},
		}},
		{"before 1970", &store.Record{Type: "T", ID: "3", Created: time.Date(1901, 1, 1, 0, 0, 0, 5, time.UTC), Fields: map[string]any{}}},
		{"every value type", &store.Record{Type: "T", ID: "4", Fields: map[string]any{
			"nil": nil, "t": true, "f": false,
			"int": int64(-1 << 62), "maxint": int64(math.MaxInt64), "whole float": 3.0, "float": -0.1,
			"inf": math.Inf(-1), "str": "a\x00b", "empty": "",
			"list":   []any{int64(1), "x", nil, []any{}, map[string]any{}},
			"object": map[string]any{"a": map[string]any{"b": []any{1.5}}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := encodeRecord(nil, tt.rec)
			if len(enc) > recordSize(tt.rec) {
				t.Errorf("encoded in %d bytes, more than recordSize's %d", len(enc), recordSize(tt.rec))
			}
			c := store.Change{Type: tt.rec.Type, ID: tt.rec.ID, Changed: []string{"a", "bc"}, Before: tt.rec}
			if n := len(encodeChange(nil, &c, base)); n > changeSize(&c) {
				t.Errorf("its change encoded in %d bytes, more than changeSize's %d", n, changeSize(&c))
			}
			got, err := decodeRecord(tt.rec.Type, tt.rec.ID, enc)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.rec, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

func TestCodecRejectsCorruptInput(t *testing.T) {
	good := encodeRecord(nil, &store.Record{Created: base, Fields: map[string]any{"a": []any{"x", 1.5}, "b": "y"}})
	for i := range len(good) {
		if _, err := decodeRecord("T", "x", good[:i]); !errors.Is(err, errCorrupt) {
			t.Errorf("truncated at %d: err %v, want errCorrupt", i, err)
		}
	}
	if _, err := decodeRecord("T", "x", append(good, 0)); !errors.Is(err, errCorrupt) {
		t.Errorf("trailing byte: err %v, want errCorrupt", err)
	}
	if _, err := decodeRecord("T", "x", []byte{99}); err == nil {
		t.Error("unknown version accepted")
	}
}

// TestDecodeFields checks that decoding some fields keeps exactly those,
// with the values a full decode gives, the trash mark, and the times, the
// creator and the implementing type when asked for; and that input cut
// before the last wanted field is refused.
func TestDecodeFields(t *testing.T) {
	trashed := base.Add(time.Hour)
	rec := &store.Record{Type: "T", ID: "1", Created: base, Updated: base, Trashed: &trashed, CreatedBy: "acc", Impl: "Impl", Fields: map[string]any{
		"nil": nil, "t": true, "int": int64(-7), "float": 2.5, "str": "s",
		"list":   []any{int64(1), "x", nil, []any{false}, map[string]any{"k": 1.5}},
		"object": map[string]any{"a": map[string]any{"b": []any{1.5}}},
	}}
	b := encodeRecord(nil, rec)
	for _, only := range [][]string{{}, {"str"}, {"list", "float"}, {"object", "missing", "core.id", "core.createdBy"}, {"core.impl"},
		{"core.created", "core.updated"}, {"nil", "t", "int", "float", "str", "list", "object"}} {
		got, err := decodeFields("T", "1", b, nil, only)
		if err != nil {
			t.Fatalf("%v: %v", only, err)
		}
		want := *rec
		want.Fields = map[string]any{}
		if !slices.Contains(only, "core.createdBy") {
			want.CreatedBy = ""
		}
		if !slices.Contains(only, "core.impl") {
			want.Impl = ""
		}
		if !slices.Contains(only, "core.created") {
			want.Created = time.Time{}
		}
		if !slices.Contains(only, "core.updated") {
			want.Updated = time.Time{}
		}
		for _, k := range only {
			if v, ok := rec.Fields[k]; ok {
				want.Fields[k] = v
			}
		}
		if d := cmp.Diff(&want, got); d != "" {
			t.Errorf("decodeFields %v (-want +got):\n%s", only, d)
		}
	}
	// Where "str" ends in the encoding (fields are in map order): any cut
	// before that is refused; after it, the probe has what it wants.
	end := 0
	for i := len(b); i > 0; i-- {
		if r, err := decodeFields("T", "1", b[:i], nil, []string{"str"}); err == nil && r.Fields["str"] == "s" {
			end = i
		}
	}
	if end == 0 {
		t.Fatal("no prefix of the encoding decodes str")
	}
	for i := range end {
		if _, err := decodeFields("T", "1", b[:i], nil, []string{"str"}); !errors.Is(err, errCorrupt) {
			t.Errorf("truncated at %d (str ends at %d): err %v, want errCorrupt", i, end, err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(nil, &store.Record{Created: base, Fields: map[string]any{"a": []any{"x", 1.5}, "b": map[string]any{"c": nil}}}))
	f.Add([]byte{codecVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord("T", "x", b)
		// A probe stops after its last field, so only a record that decodes
		// must probe without error, with the same value.
		if p, perr := decodeFields("T", "x", b, nil, []string{"a"}); err == nil && (perr != nil || !cmp.Equal(p.Fields["a"], r.Fields["a"], cmp.Comparer(func(a, b float64) bool {
			return a == b || (math.IsNaN(a) && math.IsNaN(b))
		}))) {
			t.Fatalf("decodeRecord: %v, but decodeFields: %v", err, perr)
		}
		if err != nil {
			return
		}
		// What decodes re-encodes, within recordSize, to something that
		// decodes the same.
		enc := encodeRecord(nil, r)
		if len(enc) > recordSize(r) {
			t.Fatalf("re-encoded in %d bytes, more than recordSize's %d", len(enc), recordSize(r))
		}
		again, err := decodeRecord("T", "x", enc)
		if err != nil {
			t.Fatalf("re-encoding a decoded record: %v", err)
		}
		if d := cmp.Diff(r, again, cmp.Comparer(func(a, b float64) bool {
			return a == b || (math.IsNaN(a) && math.IsNaN(b))
		})); d != "" {
			t.Fatalf("(-first +second):\n%s", d)
		}
	})
}

func BenchmarkDecodeRecord(b *testing.B) {
	buf := encodeRecord(nil, &store.Record{Created: base, Updated: base, CreatedBy: "acc", Fields: map[string]any{
		"title": "Wise and Otherwise", "authorid": int64(2), "price": 5.99, "tags": []any{"a", "b"},
	}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeRecord("Book", "01ARZ3NDEKTSV4RRFFQ69G5FAV", buf); err != nil {
			b.Fatal(err)
		}
	}
}
