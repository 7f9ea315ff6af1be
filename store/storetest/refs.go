package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

func testHops(t *testing.T, e *env, opts Options) {
	e.loadLibrary(e.inst)
	runFindCases(t, e, e.inst, []findCase{
		{"Author", "bestbook.title = 'Inferno'", []string{"a1"}},
		{"Author", "bestbook.title = 'Nothing'", nil},
		{"Author", "booklist.price > 10", []string{"a1", "a2"}},
		{"Author", "booklist.title = 'Alchemist'", []string{"a3"}},
		{"Author", "bestbook.title != 'Inferno'", []string{"a2", "a3", "a4", "a5"}},
		{"Author", "NOT bestbook.title = 'Inferno'", []string{"a2", "a3", "a4", "a5"}},
		{"Author", "bestbook.price < 10 AND age > 60", []string{"a2", "a3"}},
		{"Author", "booklist.price = null", []string{"a4", "a5"}},
		{"Author", "EXIST booklist.price", []string{"a1", "a2", "a3"}},
		{"Author", "bestbook.authorid = 2 OR booklist.title ^ 'Para'", []string{"a1", "a2"}},
		{"Author", "booklist.core.id = 'b6'", []string{"a2"}},
		{"Author", "booklist.price > 10 SORT age", []string{"a1", "a2"}},
		{"Author", "booklist.price > 10 SORT age DESC", []string{"a2", "a1"}},
	})

	t.Run("trashed targets are excluded", func(t *testing.T) {
		e.write(store.Op{Kind: store.OpTrash, Type: "Book", ID: "b1", Now: at(50)})
		if got := e.findText(e.inst, "Author", "bestbook.title = 'Inferno'"); len(got) != 0 {
			t.Errorf("hop to a trashed record finds %v", got)
		}
		if d := diffIDs([]string{"a1", "a2"}, e.findText(e.inst, "Author", "booklist.price > 14")); d != "" {
			t.Errorf("other targets of the same list (-want +got):\n%s", d)
		}
		e.write(store.Op{Kind: store.OpUntrash, Type: "Book", ID: "b1", Now: at(51)})
		if d := diffIDs([]string{"a1"}, e.findText(e.inst, "Author", "bestbook.title = 'Inferno'")); d != "" {
			t.Errorf("after untrash (-want +got):\n%s", d)
		}
	})

	t.Run("ResolveHops bound", func(t *testing.T) {
		hop := e.query(e.inst, "Author", "booklist.price > 1").Filter // six books
		if _, err := store.ResolveHops(e.ctx, e.s, e.inst, hop, 6); err != nil {
			t.Errorf("ResolveHops with max 6 (six matches): %v", err)
		}
		_, err := store.ResolveHops(e.ctx, e.s, e.inst, hop, 5)
		if !errors.Is(err, store.ErrTooMany) {
			t.Fatalf("ResolveHops with max 5 = %v, want ErrTooMany", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "booklist") || !strings.Contains(msg, "Book") {
			t.Errorf("error %q does not name the path and the target type", msg)
		}
	})

	t.Run("ResolveHops result", func(t *testing.T) {
		hop := e.query(e.inst, "Author", "bestbook.price = 5.99 AND age > 60").Filter
		got, err := store.ResolveHops(e.ctx, e.s, e.inst, hop, 100)
		if err != nil {
			t.Fatal(err)
		}
		and, ok := got.(*arcql.And)
		if !ok || len(and.Terms) != 2 {
			t.Fatalf("resolved filter = %#v, want an And of two terms", got)
		}
		in, ok := and.Terms[0].(*arcql.InIDs)
		if !ok {
			t.Fatalf("resolved hop = %#v, want *arcql.InIDs", and.Terms[0])
		}
		if d := cmp.Diff(&arcql.InIDs{Field: "bestbook", IDs: []string{"b4", "b5"}}, &arcql.InIDs{Field: in.Field, IDs: sorted(in.IDs)}); d != "" {
			t.Errorf("InIDs (-want +got):\n%s", d)
		}
	})

	if opts.HopLimit > 0 {
		t.Run("Find bound", func(t *testing.T) {
			inst := otherInstance()
			e.declare(inst)
			var ops []store.Op
			for i := range opts.HopLimit + 1 {
				ops = append(ops, upsert("Book", fmt.Sprintf("h%05d", i), at(1), map[string]any{"title": "same", "price": float64(i)}))
			}
			ops = append(ops, upsert("Author", "ha", at(2), map[string]any{"bestbook": "h00000"}))
			e.writeIn(inst, ops...)
			_, err := e.s.Find(e.ctx, inst, e.query(inst, "Author", "bestbook.title = 'same'"))
			if !errors.Is(err, store.ErrTooMany) {
				t.Errorf("hop over %d records = %v, want ErrTooMany", opts.HopLimit+1, err)
			}
			got := e.findText(inst, "Author", fmt.Sprintf("bestbook.price < %d", opts.HopLimit))
			if d := diffIDs([]string{"ha"}, got); d != "" {
				t.Errorf("hop over exactly HopLimit records (-want +got):\n%s", d)
			}
		})
	}
}

func testTrash(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	trash := func(id string, n int) store.OpResult {
		return e.write(store.Op{Kind: store.OpTrash, Type: "Book", ID: id, Now: at(n)})[0]
	}
	if r := trash("b2", 50); !r.Changed {
		t.Errorf("trash result %+v", r)
	}
	t.Run("get shows it", func(t *testing.T) {
		r := e.get(e.inst, "Book", "b2")
		if r.Trashed == nil || !r.Trashed.Equal(at(50)) {
			t.Errorf("trashed = %v, want %v", r.Trashed, at(50))
		}
		if !r.Updated.Equal(at(2)) || r.Fields["title"] != "Purgatorio" {
			t.Errorf("trash changed the record: %+v", r)
		}
	})
	t.Run("trash again keeps the first time", func(t *testing.T) {
		trash("b2", 51)
		if r := e.get(e.inst, "Book", "b2"); r.Trashed == nil || !r.Trashed.Equal(at(50)) {
			t.Errorf("trashed = %v, want %v", r.Trashed, at(50))
		}
	})
	tests := []struct {
		text           string
		includeTrashed bool
		want           []string
	}{
		{"*", false, []string{"b1", "b3", "b4", "b5", "b6", "b7", "b8"}},
		{"*", true, []string{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"}},
		{"price = 9.99", false, nil},
		{"price = 9.99", true, []string{"b2"}},
		{"price < 10 SORT price DESC", false, []string{"b4", "b5"}},
		{"price < 10 SORT price DESC", true, []string{"b2", "b4", "b5"}},
		{"core.id = 'b2'", false, nil},
		{"EXIST core.trashed", true, []string{"b2"}},
		{"core.trashed >= '2026-03-01T12:50:00Z'", true, []string{"b2"}},
		{"NOT EXIST core.trashed", true, []string{"b1", "b3", "b4", "b5", "b6", "b7", "b8"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s includeTrashed=%v", tt.text, tt.includeTrashed), func(t *testing.T) {
			q := e.query(e.inst, "Book", tt.text)
			q.IncludeTrashed = tt.includeTrashed
			if d := diffIDs(tt.want, e.find(e.inst, q)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	t.Run("limit counts visible records", func(t *testing.T) {
		trash("b1", 52)
		if d := diffIDs([]string{"b3", "b4"}, e.find(e.inst, &store.Query{Type: "Book", Limit: 2})); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		if d := diffIDs([]string{"b7", "b3"}, e.find(e.inst, e.query(e.inst, "Book", "* SORT price DESC"))[:2]); d != "" {
			t.Errorf("sorted (-want +got):\n%s", d)
		}
	})
	t.Run("untrash", func(t *testing.T) {
		r := e.write(store.Op{Kind: store.OpUntrash, Type: "Book", ID: "b2", Now: at(53)})[0]
		if !r.Changed {
			t.Errorf("untrash result %+v", r)
		}
		if got := e.get(e.inst, "Book", "b2"); got.Trashed != nil {
			t.Errorf("trashed = %v after untrash", got.Trashed)
		}
		if d := diffIDs([]string{"b2"}, e.findText(e.inst, "Book", "price = 9.99")); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		e.write(store.Op{Kind: store.OpUntrash, Type: "Book", ID: "b2", Now: at(54)})
	})
	t.Run("upsert keeps trash", func(t *testing.T) {
		e.write(upsert("Book", "b1", at(55), map[string]any{"title": "Inferno II"}))
		if r := e.get(e.inst, "Book", "b1"); r.Trashed == nil {
			t.Error("an upsert untrashed the record")
		}
	})
	t.Run("delete a trashed record", func(t *testing.T) {
		if r := e.write(store.Op{Kind: store.OpDelete, Type: "Book", ID: "b1", Now: at(56)})[0]; !r.Changed {
			t.Errorf("delete result %+v", r)
		}
		e.wantNotFound(e.inst, "Book", "b1")
	})
}

func testRefs(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	ref := func(kind store.OpKind, id, refID string, n int) store.OpResult {
		return e.write(store.Op{Kind: kind, Type: "Author", ID: id, Field: "booklist", RefID: refID, Now: at(n)})[0]
	}
	list := func(id string) any { return e.get(e.inst, "Author", id).Fields["booklist"] }
	steps := []struct {
		name string
		kind store.OpKind
		id   string
		ref  string
		want any
	}{
		{"add to an empty list", store.OpAddRef, "a4", "b8", []any{"b8"}},
		{"add again", store.OpAddRef, "a4", "b8", []any{"b8"}},
		{"add appends", store.OpAddRef, "a4", "b1", []any{"b8", "b1"}},
		{"add to an absent field", store.OpAddRef, "a5", "b2", []any{"b2"}},
		{"remove", store.OpRemoveRef, "a1", "b2", []any{"b1", "b3"}},
		{"remove absent", store.OpRemoveRef, "a1", "b7", []any{"b1", "b3"}},
		{"remove the last", store.OpRemoveRef, "a3", "b5", []any{}},
	}
	for i, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if r := ref(s.kind, s.id, s.ref, 60+i); !r.Changed {
				t.Errorf("result %+v, want Changed", r)
			}
			if d := cmp.Diff(s.want, list(s.id)); d != "" {
				t.Errorf("booklist (-want +got):\n%s", d)
			}
		})
	}
	t.Run("remove every occurrence", func(t *testing.T) {
		e.write(upsert("Author", "a2", at(70), map[string]any{"booklist": []any{"b5", "b1", "b5"}}))
		ref(store.OpRemoveRef, "a2", "b5", 71)
		if d := cmp.Diff([]any{"b1"}, list("a2")); d != "" {
			t.Errorf("booklist (-want +got):\n%s", d)
		}
	})
	t.Run("updated changes, other fields stay", func(t *testing.T) {
		ref(store.OpAddRef, "a1", "b4", 72)
		r := e.get(e.inst, "Author", "a1")
		if r.Fields["name"] != "Dante Alighieri" || r.Fields["bestbook"] != "b1" || !r.Created.Equal(at(21)) {
			t.Errorf("record after AddRef: %+v", r)
		}
	})
	runFindCases(t, e, e.inst, []findCase{
		{"Author", "booklist = 'b8'", []string{"a4"}},
		{"Author", "booklist = 'b1'", []string{"a1", "a2", "a4"}},
		{"Author", "booklist = 'b2'", []string{"a5"}},
		{"Author", "booklist = 'b5'", nil},
		{"Author", "booklist = 'b4'", []string{"a1"}},
		{"Author", "NOT EXIST booklist", []string{"a3"}},
		{"Author", "booklist.title = 'Gitanjali'", []string{"a4"}},
	})
}

// testReverseLookup is the query behind clearArrayReferences: which records
// of a type list a given id.
func testReverseLookup(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	check := func(t *testing.T, text string, want []string) {
		t.Helper()
		if d := diffIDs(want, e.findText(e.inst, "Author", text)); d != "" {
			t.Errorf("%s (-want +got):\n%s", text, d)
		}
	}
	check(t, "booklist = 'b2'", []string{"a1"})
	check(t, "bestbook = 'b1'", []string{"a1"})
	t.Run("follows AddRef", func(t *testing.T) {
		e.write(store.Op{Kind: store.OpAddRef, Type: "Author", ID: "a2", Field: "booklist", RefID: "b2", Now: at(50)})
		check(t, "booklist = 'b2'", []string{"a1", "a2"})
	})
	t.Run("follows list replacement", func(t *testing.T) {
		e.write(upsert("Author", "a1", at(51), map[string]any{"booklist": []any{"b3"}}))
		check(t, "booklist = 'b2'", []string{"a2"})
		check(t, "booklist = 'b3'", []string{"a1"})
		check(t, "booklist = 'b1'", nil)
	})
	t.Run("follows clearing", func(t *testing.T) {
		e.write(upsert("Author", "a2", at(52), map[string]any{"booklist": nil}))
		check(t, "booklist = 'b2'", nil)
	})
	t.Run("follows delete", func(t *testing.T) {
		e.write(store.Op{Kind: store.OpDelete, Type: "Author", ID: "a3", Now: at(53)})
		check(t, "booklist = 'b5'", nil)
		check(t, "bestbook = 'b5'", nil)
	})
	t.Run("many referrers in id order", func(t *testing.T) {
		var ops []store.Op
		var want []string
		for i := range 30 {
			id := fmt.Sprintf("r%02d", i)
			ops = append(ops, upsert("Author", id, at(60), map[string]any{"name": id, "booklist": []any{"b7", "b8"}}))
			want = append(want, id)
		}
		e.write(ops...)
		check(t, "booklist = 'b8'", want)
		q := e.query(e.inst, "Author", "booklist = 'b8'")
		q.Limit = 10
		if d := diffIDs(want[:10], e.find(e.inst, q)); d != "" {
			t.Errorf("first 10 (-want +got):\n%s", d)
		}
		q.After = want[9]
		if d := diffIDs(want[10:20], e.find(e.inst, q)); d != "" {
			t.Errorf("next 10 (-want +got):\n%s", d)
		}
		q.After = ""
		q.Backward = true
		if d := diffIDs(want[20:], e.find(e.inst, q)); d != "" {
			t.Errorf("last 10 (-want +got):\n%s", d)
		}
		got := e.find(e.inst, &store.Query{Type: "Author", Filter: &arcql.InIDs{Field: "booklist", IDs: []string{"b8"}}, Limit: 5})
		if d := diffIDs(want[:5], got); d != "" {
			t.Errorf("InIDs first 5 (-want +got):\n%s", d)
		}
	})
}
