package store

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
		{Kind: OpUpsert, Type: "Book", ID: got[0].ID, Set: map[string]any{"n": int64(1), "tags": []any{"a"}}},
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
