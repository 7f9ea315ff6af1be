package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
)

// usage reads an instance's usage, which must succeed.
func (e *env) usage(inst string) store.Usage {
	e.t.Helper()
	u, err := e.s.Usage(e.ctx, inst)
	if err != nil {
		e.t.Fatalf("Usage(%s): %v", inst, err)
	}
	return u
}

// figures are a usage without its counters, comparable with ==.
type figures struct{ Records, StorageBytes int64 }

func sized(u store.Usage) figures { return figures{u.Records, u.StorageBytes} }

// testUsage follows an instance's records and their size through every
// kind of write. Sizes are each store's own measure, so the suite checks
// what every measure must do: a record adds a positive size, a longer
// value adds bytes and a shorter one takes them off, and a record written
// back exactly as it was (same fields, same time) takes exactly its
// old size again.
func testUsage(t *testing.T, e *env, opts Options) {
	inst := e.inst
	e.declare(inst)
	if u := e.usage(inst); u.Records != 0 || u.StorageBytes != 0 {
		t.Fatalf("usage of a new instance = %+v, want nothing", u)
	}
	if u := e.usage(otherInstance()); u.Records != 0 || u.StorageBytes != 0 || u.Counters != nil {
		t.Fatalf("usage of an unknown instance = %+v, want nothing", u)
	}
	book := func(title string) store.Op {
		return upsert("Book", "b1", at(1), map[string]any{"title": title, "price": 12.5})
	}
	e.write(book("Inferno"))
	one := sized(e.usage(inst))
	if one.Records != 1 || one.StorageBytes <= 0 {
		t.Fatalf("usage after one create = %+v, want 1 record of some bytes", one)
	}
	step := func(what string, want func(before, after figures) bool, ops ...store.Op) figures {
		t.Helper()
		before := sized(e.usage(inst))
		e.write(ops...)
		after := sized(e.usage(inst))
		if !want(before, after) {
			t.Errorf("%s: usage went from %+v to %+v", what, before, after)
		}
		return after
	}
	same := func(b, a figures) bool { return a == b }
	step("an update that grows", func(b, a figures) bool { return a.Records == 1 && a.StorageBytes > b.StorageBytes },
		book(strings.Repeat("Inferno ", 50)))
	step("an update that shrinks", func(b, a figures) bool { return a.Records == 1 && a.StorageBytes < b.StorageBytes },
		book("I"))
	step("the record written back as it was, as after its create", func(b, a figures) bool { return a == one }, book("Inferno"))
	// Every type counts, in one batch as in several.
	two := step("creates of three types", func(b, a figures) bool {
		return a.Records == 4 && a.StorageBytes > b.StorageBytes
	},
		upsert("Author", "a1", at(2), map[string]any{"name": "Dante", "booklist": []any{}}),
		upsert("Account", "u1", at(2), map[string]any{"username": "ann"}),
		upsert("Book", "b2", at(2), map[string]any{"title": "Purgatorio"}),
	)
	// A record created and deleted leaves no trace.
	withB3 := step("a create", func(b, a figures) bool { return a.Records == 5 && a.StorageBytes > b.StorageBytes },
		upsert("Book", "b3", at(3), map[string]any{"title": "Paradiso", "price": 15.0}))
	step("its delete", func(b, a figures) bool { return a == two }, store.Op{Kind: store.OpDelete, Type: "Book", ID: "b3"})
	step("a delete of a missing record", same, store.Op{Kind: store.OpDelete, Type: "Book", ID: "nope"})
	step("a create and a delete in one batch", same,
		upsert("Book", "b3", at(3), map[string]any{"title": "Paradiso", "price": 15.0}),
		store.Op{Kind: store.OpDelete, Type: "Book", ID: "b3"})
	_ = withB3
	// Trash keeps the record counted; untrash takes back what trash added.
	step("a trash", func(b, a figures) bool { return a.Records == b.Records && a.StorageBytes >= b.StorageBytes },
		store.Op{Kind: store.OpTrash, Type: "Book", ID: "b2", Now: at(4)})
	step("a second trash", same, store.Op{Kind: store.OpTrash, Type: "Book", ID: "b2", Now: at(5)})
	step("an untrash", func(b, a figures) bool { return a == two }, store.Op{Kind: store.OpUntrash, Type: "Book", ID: "b2"})
	// Reference edits.
	step("an AddRef", func(b, a figures) bool { return a.Records == b.Records && a.StorageBytes > b.StorageBytes },
		store.Op{Kind: store.OpAddRef, Type: "Author", ID: "a1", Field: "booklist", RefID: "b1", Now: at(6)})
	step("an AddRef of a present id", same,
		store.Op{Kind: store.OpAddRef, Type: "Author", ID: "a1", Field: "booklist", RefID: "b1", Now: at(7)})
	step("a RemoveRef", func(b, a figures) bool { return a.Records == b.Records && a.StorageBytes < b.StorageBytes },
		store.Op{Kind: store.OpRemoveRef, Type: "Author", ID: "a1", Field: "booklist", RefID: "b1", Now: at(8)})
	step("an AddRef on a missing record", same,
		store.Op{Kind: store.OpAddRef, Type: "Author", ID: "nope", Field: "booklist", RefID: "b1", Now: at(8)})

	t.Run("a failed write counts nothing", func(t *testing.T) {
		before := sized(e.usage(inst))
		_, err := e.s.Write(e.ctx, inst, []store.Op{
			upsert("Book", "b9", at(9), map[string]any{"title": "New"}),
			upsert("Account", "u2", at(9), map[string]any{"username": "ann"}),
		}, store.Quota{})
		if !errors.Is(err, store.ErrUnique) {
			t.Fatalf("a taken username: %v, want ErrUnique", err)
		}
		if got := sized(e.usage(inst)); got != before {
			t.Errorf("usage after a refused write = %+v, want %+v", got, before)
		}
	})
	t.Run("isolation", func(t *testing.T) {
		other := otherInstance()
		e.declare(other)
		e.writeIn(other, upsert("Book", "b1", at(1), map[string]any{"title": "Inferno", "price": 12.5}))
		if got := sized(e.usage(other)); got != one {
			t.Errorf("the same record in another instance: %+v, want %+v", got, one)
		}
		if got := e.usage(inst); got.Records != two.Records {
			t.Errorf("usage of the first instance = %+v after writes to another", got)
		}
	})
	t.Run("kept as counted from scratch", func(t *testing.T) {
		if opts.ForgetUsage == nil {
			t.Skip("the store's kept usage cannot be removed")
		}
		kept := sized(e.usage(inst))
		opts.ForgetUsage(t, e.s, inst)
		if got := sized(e.usage(inst)); got != kept {
			t.Errorf("usage counted from scratch = %+v, kept %+v", got, kept)
		}
		// The first Declare (or write) counts and keeps it; writes go on
		// from there.
		e.declare(inst)
		e.write(upsert("Book", "b5", at(10), map[string]any{"title": "Counted"}),
			store.Op{Kind: store.OpDelete, Type: "Book", ID: "b5"})
		if got := sized(e.usage(inst)); got != kept {
			t.Errorf("usage after Declare and writes = %+v, want %+v", got, kept)
		}
		opts.ForgetUsage(t, e.s, inst)
		e.write(upsert("Book", "b5", at(10), map[string]any{"title": "Counted"}))
		opts.ForgetUsage(t, e.s, inst)
		if got := e.usage(inst); got.Records != kept.Records+1 {
			t.Errorf("records counted at a first write = %d, want %d", got.Records, kept.Records+1)
		}
		e.write(store.Op{Kind: store.OpDelete, Type: "Book", ID: "b5"})
		if got := sized(e.usage(inst)); got != kept {
			t.Errorf("usage after a first write counted it = %+v, want %+v", got, kept)
		}
	})
	t.Run("reopen", func(t *testing.T) {
		if opts.Reopen == nil {
			t.Skip("the store cannot be reopened")
		}
		before := sized(e.usage(inst))
		e.s = opts.Reopen(t, e.s)
		if got := sized(e.usage(inst)); got != before {
			t.Errorf("usage after reopening = %+v, want %+v", got, before)
		}
		e.write(upsert("Book", "b4", at(10), map[string]any{"title": "After"}))
		if got := e.usage(inst); got.Records != before.Records+1 {
			t.Errorf("records after a create past a reopen = %d, want %d", got.Records, before.Records+1)
		}
	})
	t.Run("DropInstance", func(t *testing.T) {
		if err := e.s.AddCounters(e.ctx, map[string]map[string]int64{inst: {"requests": 3}}); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DropInstance(e.ctx, inst); err != nil {
			t.Fatal(err)
		}
		if got := e.usage(inst); got.Records != 0 || got.StorageBytes != 0 || got.Counters != nil {
			t.Errorf("usage after DropInstance = %+v, want nothing", got)
		}
		e.write(book("Inferno"))
		if got := sized(e.usage(inst)); got != one {
			t.Errorf("a create after DropInstance: %+v, want %+v", got, one)
		}
	})
}

// testQuota checks that a Write past a quota is refused whole, before any
// of it applies, and that writes that lower usage pass.
func testQuota(t *testing.T, e *env) {
	inst := e.inst
	e.declare(inst)
	e.write(
		upsert("Book", "b1", at(1), map[string]any{"title": "Inferno"}),
		upsert("Book", "b2", at(1), map[string]any{"title": "Purgatorio"}),
	)
	refused := func(t *testing.T, q store.Quota, quota string, limit, usage int64, ops ...store.Op) {
		t.Helper()
		before := e.usage(inst)
		_, err := e.s.Write(e.ctx, inst, ops, q)
		var qe *store.QuotaError
		if !errors.As(err, &qe) || !errors.Is(err, store.ErrQuota) {
			t.Fatalf("Write past %+v = %v, want a *store.QuotaError", q, err)
		}
		if want := (store.QuotaError{Quota: quota, Limit: limit, Usage: usage}); *qe != want && usage >= 0 {
			t.Errorf("QuotaError = %+v, want %+v", *qe, want)
		}
		if qe.Quota != quota || qe.Limit != limit {
			t.Errorf("QuotaError = %+v, want quota %s limit %d", *qe, quota, limit)
		}
		if !strings.Contains(err.Error(), fmt.Sprint(limit)) {
			t.Errorf("message %q does not name the limit", err)
		}
		if got := e.usage(inst); cmp.Diff(sized(before), sized(got)) != "" {
			t.Errorf("usage after a refused write = %+v, want %+v", got, before)
		}
		for _, op := range ops {
			if op.Kind == store.OpUpsert {
				if r, err := e.s.Get(e.ctx, inst, op.Type, op.ID); err == nil && r.Updated.Equal(op.Now) {
					t.Errorf("%s %s was written by a refused write", op.Type, op.ID)
				}
			}
		}
	}
	allowed := func(t *testing.T, q store.Quota, ops ...store.Op) {
		t.Helper()
		if _, err := e.s.Write(e.ctx, inst, ops, q); err != nil {
			t.Fatalf("Write within %+v: %v", q, err)
		}
	}
	t.Run("records", func(t *testing.T) {
		q := store.Quota{Records: 3}
		refused(t, q, "records", 3, 4,
			upsert("Book", "b3", at(2), map[string]any{"title": "Paradiso"}),
			upsert("Book", "b4", at(2), map[string]any{"title": "Wise and Otherwise"}))
		e.wantNotFound(inst, "Book", "b3")
		e.wantNotFound(inst, "Book", "b4")
		allowed(t, q, upsert("Book", "b3", at(3), map[string]any{"title": "Paradiso"}))
		refused(t, q, "records", 3, 4, upsert("Book", "b4", at(4), map[string]any{"title": "Wise"}))
		// At the quota: updates, trash, and a delete with a create.
		allowed(t, q, upsert("Book", "b1", at(5), map[string]any{"title": strings.Repeat("Inferno ", 20)}))
		allowed(t, q, store.Op{Kind: store.OpTrash, Type: "Book", ID: "b3", Now: at(5)})
		allowed(t, q, store.Op{Kind: store.OpDelete, Type: "Book", ID: "b3"},
			upsert("Book", "b4", at(6), map[string]any{"title": "Wise"}))
		// A quota lowered below the usage: deletes still pass, creates not.
		low := store.Quota{Records: 1}
		refused(t, low, "records", 1, 4, upsert("Book", "b5", at(7), map[string]any{"title": "Alchemist"}))
		allowed(t, low, store.Op{Kind: store.OpDelete, Type: "Book", ID: "b4"})
		if got := e.usage(inst).Records; got != 2 {
			t.Errorf("records = %d, want 2", got)
		}
	})
	t.Run("storageBytes", func(t *testing.T) {
		now := e.usage(inst).StorageBytes
		q := store.Quota{StorageBytes: now + 20}
		refused(t, q, "storageBytes", now+20, -1, upsert("Book", "b2", at(8), map[string]any{"title": strings.Repeat("Purgatorio ", 10)}))
		refused(t, q, "storageBytes", now+20, -1, upsert("Book", "b9", at(8), map[string]any{"title": strings.Repeat("x", 100)}))
		e.wantNotFound(inst, "Book", "b9")
		// A write that shrinks passes over the quota; trash always does.
		over := store.Quota{StorageBytes: 1}
		allowed(t, over, upsert("Book", "b1", at(9), map[string]any{"title": "I"}))
		allowed(t, over, store.Op{Kind: store.OpTrash, Type: "Book", ID: "b1", Now: at(9)},
			store.Op{Kind: store.OpUntrash, Type: "Book", ID: "b2"})
		refused(t, over, "storageBytes", 1, -1,
			store.Op{Kind: store.OpAddRef, Type: "Book", ID: "b2", Field: "tags", RefID: "x", Now: at(10)})
	})
	t.Run("zero quota bounds nothing", func(t *testing.T) {
		allowed(t, store.Quota{}, upsert("Book", "b7", at(11), map[string]any{"title": strings.Repeat("x", 1000)}))
	})
}

// testCounters checks AddCounters: adds from many goroutines all count,
// a counter at 0 is removed, and several instances go in one call.
func testCounters(t *testing.T, e *env) {
	i1, i2 := e.inst, otherInstance()
	add := func(adds map[string]map[string]int64) {
		t.Helper()
		if err := e.s.AddCounters(e.ctx, adds); err != nil {
			t.Fatalf("AddCounters(%v): %v", adds, err)
		}
	}
	add(map[string]map[string]int64{i1: {"requests": 2, "calls/2026-03-01": 5}, i2: {"requests": 7}})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := e.s.AddCounters(e.ctx, map[string]map[string]int64{i1: {"requests": 1}}); err != nil {
				t.Errorf("AddCounters: %v", err)
			}
		})
	}
	wg.Wait()
	if d := cmp.Diff(map[string]int64{"requests": 22, "calls/2026-03-01": 5}, e.usage(i1).Counters); d != "" {
		t.Errorf("counters of %s (-want +got):\n%s", i1, d)
	}
	if d := cmp.Diff(map[string]int64{"requests": 7}, e.usage(i2).Counters); d != "" {
		t.Errorf("counters of %s (-want +got):\n%s", i2, d)
	}
	add(map[string]map[string]int64{i1: {"calls/2026-03-01": -5, "requests": -2}})
	if d := cmp.Diff(map[string]int64{"requests": 20}, e.usage(i1).Counters); d != "" {
		t.Errorf("counters after one reached 0 (-want +got):\n%s", d)
	}
	if u := e.usage(i1); u.Records != 0 || u.StorageBytes != 0 {
		t.Errorf("counters changed the records' usage: %+v", u)
	}
	add(nil)
	add(map[string]map[string]int64{i1: {}})
	if err := e.s.AddCounters(e.ctx, map[string]map[string]int64{i1: {"": 1}}); err == nil {
		t.Error("a counter without a name was accepted")
	}
}
