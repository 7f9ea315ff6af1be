package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
)

// testIsolation writes the same ids into two instances and checks every
// operation of one against the other.
func testIsolation(t *testing.T, e *env) {
	i1, i2 := e.inst, otherInstance()
	e.loadLibrary(i1)
	e.loadLibrary(i2)
	e.writeIn(i2, upsert("Book", "b1", at(40), map[string]any{"title": "Inferno (2)", "price": 99.0}))
	e.writeIn(i2, upsert("Book", "only2", at(40), map[string]any{"title": "Only in 2"}))

	title := func(inst, id string) any { return e.get(inst, "Book", id).Fields["title"] }
	t.Run("Get", func(t *testing.T) {
		if got := title(i1, "b1"); got != "Inferno" {
			t.Errorf("i1 b1 title = %v", got)
		}
		if got := title(i2, "b1"); got != "Inferno (2)" {
			t.Errorf("i2 b1 title = %v", got)
		}
		e.wantNotFound(i1, "Book", "only2")
	})
	t.Run("GetMany", func(t *testing.T) {
		got, err := e.s.GetMany(e.ctx, i1, "Book", []string{"b1", "only2"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got["b1"] == nil || got["b1"].Fields["title"] != "Inferno" {
			t.Errorf("GetMany in i1 = %v", got)
		}
	})
	t.Run("Find", func(t *testing.T) {
		runFindCases(t, e, i1, []findCase{
			{"Book", "price = 99", nil},
			{"Book", "price = 12.5", []string{"b1"}},
			{"Book", "title = 'Only in 2'", nil},
			{"Book", "core.id = 'only2'", nil},
			{"Book", "* SORT price DESC", []string{"b7", "b3", "b1", "b2", "b4", "b5", "b6", "b8"}},
			{"Author", "bestbook.title = 'Inferno (2)'", nil},
			{"Author", "bestbook.title = 'Inferno'", []string{"a1"}},
		})
		runFindCases(t, e, i2, []findCase{
			{"Book", "price = 99", []string{"b1"}},
			{"Book", "price = 12.5", nil},
			{"Book", "* SORT price DESC", []string{"b1", "b7", "b3", "b2", "b4", "b5", "b6", "b8", "only2"}},
			{"Author", "bestbook.title = 'Inferno (2)'", []string{"a1"}},
		})
	})
	t.Run("cursor of another instance", func(t *testing.T) {
		if _, err := e.s.Find(e.ctx, i1, &store.Query{Type: "Book", After: "only2"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Find after a record of another instance = %v, want ErrNotFound", err)
		}
	})
	t.Run("Write", func(t *testing.T) {
		e.writeIn(i1,
			upsert("Book", "b2", at(41), map[string]any{"title": "Changed in 1"}),
			store.Op{Kind: store.OpTrash, Type: "Book", ID: "b3", Now: at(41)},
			store.Op{Kind: store.OpDelete, Type: "Book", ID: "b4", Now: at(41)},
			store.Op{Kind: store.OpAddRef, Type: "Author", ID: "a4", Field: "booklist", RefID: "b8", Now: at(41)},
			store.Op{Kind: store.OpRemoveRef, Type: "Author", ID: "a1", Field: "booklist", RefID: "b1", Now: at(41)},
		)
		if got := title(i2, "b2"); got != "Purgatorio" {
			t.Errorf("i2 b2 title = %v after an upsert in i1", got)
		}
		if r := e.get(i2, "Book", "b3"); r.Trashed != nil {
			t.Error("i2 b3 trashed by a trash in i1")
		}
		e.get(i2, "Book", "b4")
		if d := cmp.Diff([]any{}, e.get(i2, "Author", "a4").Fields["booklist"]); d != "" {
			t.Errorf("i2 a4 booklist changed by AddRef in i1 (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]any{"b1", "b2", "b3"}, e.get(i2, "Author", "a1").Fields["booklist"]); d != "" {
			t.Errorf("i2 a1 booklist changed by RemoveRef in i1 (-want +got):\n%s", d)
		}
		runFindCases(t, e, i2, []findCase{
			{"Author", "booklist = 'b8'", nil},
			{"Author", "booklist = 'b1'", []string{"a1"}},
			{"Book", "title = 'Changed in 1'", nil},
		})
		runFindCases(t, e, i1, []findCase{
			{"Author", "booklist = 'b8'", []string{"a4"}},
			{"Author", "booklist = 'b1'", nil},
		})
	})
	t.Run("upsert creates per instance", func(t *testing.T) {
		r := e.writeIn(i1, upsert("Book", "only2", at(42), map[string]any{"title": "Now in 1 too"}))[0]
		if !r.Created {
			t.Error("a record of the same id in another instance made the upsert a merge")
		}
		if got := title(i2, "only2"); got != "Only in 2" {
			t.Errorf("i2 only2 title = %v", got)
		}
	})
	t.Run("Declare", func(t *testing.T) {
		// i3 declares nothing: same records, no indexes, same answers.
		i3 := otherInstance()
		e.writeIn(i3, upsert("Book", "b1", at(1), map[string]any{"title": "Three", "price": 12.5}))
		runFindCases(t, e, i3, []findCase{
			{"Book", "price = 12.5", []string{"b1"}},
			{"Book", "* SORT price DESC", []string{"b1"}},
		})
		if got := title(i1, "b1"); got != "Inferno" {
			t.Errorf("i1 b1 title = %v", got)
		}
	})
}

func testDropInstance(t *testing.T, e *env) {
	i1, i2 := e.inst, otherInstance()
	e.loadLibrary(i1)
	e.loadLibrary(i2)
	e.writeIn(i1, upsert("Account", "u1", at(1), map[string]any{"username": "ann"}))
	if err := e.s.DropInstance(e.ctx, i1); err != nil {
		t.Fatal(err)
	}
	t.Run("dropped", func(t *testing.T) {
		e.wantNotFound(i1, "Book", "b1")
		e.wantNotFound(i1, "Author", "a1")
		got, err := e.s.GetMany(e.ctx, i1, "Book", []string{"b1", "b2"})
		if err != nil || len(got) != 0 {
			t.Errorf("GetMany after drop = %v, %v", got, err)
		}
		for _, q := range []*store.Query{
			{Type: "Book"},
			e.query(i1, "Book", "price = 12.5"),
			e.query(i1, "Author", "booklist = 'b1'"),
			{Type: "Book", IncludeTrashed: true},
		} {
			if got := e.find(i1, q); len(got) != 0 {
				t.Errorf("Find %+v after drop = %v", q, got)
			}
		}
	})
	t.Run("other instance intact", func(t *testing.T) {
		if d := diffIDs([]string{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"}, e.find(i2, &store.Query{Type: "Book"})); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		if d := diffIDs([]string{"a1"}, e.findText(i2, "Author", "booklist = 'b2'")); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
	t.Run("usable again", func(t *testing.T) {
		e.declare(i1)
		r := e.writeIn(i1,
			upsert("Book", "b1", at(90), map[string]any{"title": "Again", "price": 1.0}),
			upsert("Account", "u2", at(90), map[string]any{"username": "ann"}),
		)
		if !r[0].Created {
			t.Error("b1 not created after drop")
		}
		if d := diffIDs([]string{"b1"}, e.findText(i1, "Book", "price = 1")); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
	t.Run("unknown instance", func(t *testing.T) {
		if err := e.s.DropInstance(e.ctx, otherInstance()); err != nil {
			t.Errorf("DropInstance of an unknown instance: %v", err)
		}
	})
}

// testDeclare declares indexes over existing records and checks the
// answers do not change, then that writes keep them right.
func testDeclare(t *testing.T, e *env) {
	// Records first, no Declare.
	var ops []store.Op
	var ids []string
	for i := range 40 {
		id := fmt.Sprintf("d%02d", i)
		set := map[string]any{"title": fmt.Sprintf("t%d", i%5), "price": float64(i % 9)}
		if i%8 == 0 {
			delete(set, "price")
		}
		ops = append(ops, upsert("Book", id, at(i), set))
		ids = append(ids, id)
	}
	e.write(ops...)
	texts := []string{
		"price = 3",
		"price > 6",
		"price IN [2, 4)",
		"price = null",
		"* SORT price DESC",
		"price >= 4 SORT price",
		"title = 't3'",
		"title = 't3' SORT price DESC",
		"title ^ 't' SORT title",
	}
	check := func(t *testing.T, stage string) {
		t.Helper()
		for _, text := range texts {
			q := e.query(e.inst, "Book", text)
			want := e.oracle(e.inst, q, ids)
			if d := diffIDs(want, e.find(e.inst, q)); d != "" {
				t.Errorf("%s: %s (-want +got):\n%s", stage, text, d)
			}
			q.Limit = 3
			if d := diffIDs(want[:min(3, len(want))], e.find(e.inst, q)); d != "" {
				t.Errorf("%s: %s limit 3 (-want +got):\n%s", stage, text, d)
			}
		}
	}
	check(t, "undeclared")

	specs := []store.TypeSpec{{Name: "Book", Indices: [][]string{{"price"}, {"title", "price"}}}}
	if err := e.s.Declare(e.ctx, e.inst, specs); err != nil {
		t.Fatal(err)
	}
	check(t, "declared")
	t.Run("again", func(t *testing.T) {
		if err := e.s.Declare(e.ctx, e.inst, specs); err != nil {
			t.Fatal(err)
		}
		check(t, "declared twice")
	})
	t.Run("writes keep indexes", func(t *testing.T) {
		e.write(
			upsert("Book", "d03", at(50), map[string]any{"price": 100.0}),
			upsert("Book", "d04", at(50), map[string]any{"price": nil, "title": "t3"}),
			store.Op{Kind: store.OpDelete, Type: "Book", ID: "d05", Now: at(50)},
			upsert("Book", "d99", at(50), map[string]any{"title": "t3", "price": 3.0}),
		)
		ids = append(ids, "d99")
		check(t, "after writes")
		if d := diffIDs([]string{"d03"}, e.findText(e.inst, "Book", "price = 100")); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
	t.Run("redeclared with other indexes", func(t *testing.T) {
		other := []store.TypeSpec{{Name: "Book", Indices: [][]string{{"title"}}}, {Name: "Author", Refs: []string{"booklist"}}}
		if err := e.s.Declare(e.ctx, e.inst, other); err != nil {
			t.Fatal(err)
		}
		check(t, "redeclared")
		e.write(upsert("Book", "d06", at(60), map[string]any{"price": 77.0, "title": "t77"}))
		if err := e.s.Declare(e.ctx, e.inst, specs); err != nil {
			t.Fatal(err)
		}
		check(t, "declared back")
		if d := diffIDs([]string{"d06"}, e.findText(e.inst, "Book", "price = 77")); d != "" {
			t.Errorf("index rebuilt without a record written meanwhile (-want +got):\n%s", d)
		}
	})
	t.Run("unique over existing records", func(t *testing.T) {
		e.write(
			upsert("Account", "u1", at(1), map[string]any{"username": "ann"}),
			upsert("Account", "u2", at(1), map[string]any{"username": "bob"}),
		)
		if err := e.s.Declare(e.ctx, e.inst, append(specs, store.TypeSpec{Name: "Account", Unique: []string{"username"}})); err != nil {
			t.Fatal(err)
		}
		_, err := e.s.Write(e.ctx, e.inst, []store.Op{upsert("Account", "u3", at(2), map[string]any{"username": "bob"})}, store.Quota{})
		checkFieldError(t, err, &store.FieldError{Err: store.ErrUnique, Type: "Account", Field: "username", Value: "bob"})
	})
	t.Run("empty", func(t *testing.T) {
		if err := e.s.Declare(e.ctx, otherInstance(), nil); err != nil {
			t.Errorf("Declare of no types: %v", err)
		}
	})
}
