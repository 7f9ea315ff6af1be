package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/corehq/core/store"
)

// testKeep: an op's Keep fields (@immutable) may be given to a new record
// and given again unchanged, and a write that would change one fails
// whole, in the same step as the write, so that of writers racing to
// create one record only one value lands.
func testKeep(t *testing.T, e *env) {
	e.declare(e.inst)
	kept := func(op store.Op, fields ...string) store.Op {
		op.Keep = fields
		return op
	}
	meta := map[string]any{"a": int64(1), "b": "x", "c": []any{"y", 2.5}, "d": map[string]any{"e": true, "f": nil}}
	e.write(kept(upsert("Book", "k1", at(1), map[string]any{"title": "T", "price": 2.0, "meta": meta}), "title", "meta"))
	e.write(upsert("Author", "a1", at(1), map[string]any{"name": "A", "booklist": []any{"k1"}}))
	wantImmutable := func(t *testing.T, field string, ops ...store.Op) {
		t.Helper()
		_, err := e.s.Write(e.ctx, e.inst, ops, store.Quota{})
		checkFieldError(t, err, &store.FieldError{Err: store.ErrImmutable, Type: ops[len(ops)-1].Type, Field: field})
		if got := e.get(e.inst, "Book", "k1"); got.Fields["title"] != "T" || !store.SameValue(got.Fields["price"], 2.0) {
			t.Errorf("after the failed write k1 is %v", got.Fields)
		}
	}

	t.Run("the same values again", func(t *testing.T) {
		e.write(kept(upsert("Book", "k1", at(2), map[string]any{"title": "T", "price": int64(2), "meta": meta}), "title", "meta", "price"))
	})
	t.Run("a change fails whole", func(t *testing.T) {
		wantImmutable(t, "title",
			upsert("Book", "k-new", at(3), map[string]any{"title": "N"}),
			kept(upsert("Book", "k1", at(3), map[string]any{"title": "U", "price": 3.0}), "title"))
		e.wantNotFound(e.inst, "Book", "k-new")
	})
	t.Run("a field never set is null", func(t *testing.T) {
		wantImmutable(t, "authorid", kept(upsert("Book", "k1", at(4), map[string]any{"authorid": int64(5)}), "authorid"))
		e.write(kept(upsert("Book", "k1", at(4), map[string]any{"authorid": nil}), "authorid"))
	})
	t.Run("an object", func(t *testing.T) {
		other := map[string]any{"a": int64(1), "b": "x", "c": []any{"y", 2.5}, "d": map[string]any{"e": false, "f": nil}}
		wantImmutable(t, "meta", kept(upsert("Book", "k1", at(5), map[string]any{"meta": other}), "meta"))
	})
	t.Run("fields not kept change", func(t *testing.T) {
		e.write(kept(upsert("Book", "k2", at(5), map[string]any{"title": "T2"}), "title"))
		e.write(kept(upsert("Book", "k2", at(6), map[string]any{"price": 9.0}), "title"))
		if got := e.get(e.inst, "Book", "k2"); got.Fields["title"] != "T2" || !store.SameValue(got.Fields["price"], 9.0) {
			t.Errorf("k2 is %v", got.Fields)
		}
	})
	t.Run("edits", func(t *testing.T) {
		wantImmutable(t, "booklist", kept(store.Op{Kind: store.OpAddRef, Type: "Author", ID: "a1", Field: "booklist", RefID: "k2", Now: at(7)}, "booklist"))
		wantImmutable(t, "booklist", kept(store.Op{Kind: store.OpRemoveRef, Type: "Author", ID: "a1", Field: "booklist", RefID: "k1", Now: at(7)}, "booklist"))
		wantImmutable(t, "price", kept(store.Op{Kind: store.OpMath, Type: "Book", ID: "k1", Now: at(7), Math: map[string]store.Arith{"price": {Plus: f64(1)}}}, "price"))
		// An edit that changes nothing passes.
		e.write(kept(store.Op{Kind: store.OpAddRef, Type: "Author", ID: "a1", Field: "booklist", RefID: "k1", Now: at(7)}, "booklist"))
		if got := store.Strings(e.get(e.inst, "Author", "a1").Fields["booklist"]); len(got) != 1 || got[0] != "k1" {
			t.Errorf("booklist %v, want [k1]", got)
		}
	})
	t.Run("writers racing to create one record", func(t *testing.T) {
		KeepRace(t, []store.Store{e.s}, e.inst)
	})
}

// KeepRace has 8 writers, spread over stores (processes sharing a
// database, or one store), create one record at once, each with its own
// value of a field they keep (store.Op.Keep): one must create it, every
// other fail with ErrImmutable, and the record hold the creator's value.
func KeepRace(t *testing.T, stores []store.Store, inst string) {
	t.Helper()
	ctx := context.Background()
	won := race(t, 8, store.ErrImmutable, func(i int) error {
		op := upsert("Book", "race", at(8), map[string]any{"title": fmt.Sprintf("t%d", i)})
		op.Keep = []string{"title"}
		_, err := stores[i%len(stores)].Write(ctx, inst, []store.Op{op}, store.Quota{})
		return err
	})
	if len(won) != 1 {
		t.Fatalf("writers %v all wrote their title, want one", won)
	}
	r, err := stores[len(stores)-1].Get(ctx, inst, "Book", "race")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("t%d", won[0]); r.Fields["title"] != want {
		t.Errorf("title %v, want the creator's %s", r.Fields["title"], want)
	}
}
