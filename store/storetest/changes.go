package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/corehq/core/store"
)

// The change feed (store/changes.go): what each op appends, in what
// order, paging, retention, waiting, and DropInstance.

// newChanges returns the changes of inst after after (all of them), and
// checks that they are numbered after+1, after+2, … with a time.
func (e *env) newChanges(s store.Store, inst string, after uint64) []store.Change {
	e.t.Helper()
	got, err := s.Changes(e.ctx, inst, after, 100000)
	if err != nil {
		e.t.Fatalf("Changes(%s, %d): %v", inst, after, err)
	}
	for i, c := range got {
		if c.Seq != after+uint64(i)+1 {
			e.t.Fatalf("Changes(%s, %d): change %d has Seq %d, want %d", inst, after, i, c.Seq, after+uint64(i)+1)
		}
		if c.Time.IsZero() {
			e.t.Errorf("Changes(%s, %d): change %d has no time", inst, after, c.Seq)
		}
	}
	return got
}

// lastChange is LastChange that must succeed.
func (e *env) lastChange(s store.Store, inst string) uint64 {
	e.t.Helper()
	last, err := s.LastChange(e.ctx, inst)
	if err != nil {
		e.t.Fatalf("LastChange(%s): %v", inst, err)
	}
	return last
}

// changeOf is the expected change, without Seq and Time.
func changeOf(op store.ChangeOp, typ, id string, changed ...string) store.Change {
	return store.Change{Op: op, Type: typ, ID: id, Changed: changed}
}

var ignoreSeqTime = cmpopts.IgnoreFields(store.Change{}, "Seq", "Time")

func testChangeOps(t *testing.T, e *env) {
	e.declare(e.inst)
	if got := e.lastChange(e.s, e.inst); got != 0 {
		t.Fatalf("LastChange of a new instance = %d, want 0", got)
	}
	if got := e.newChanges(e.s, e.inst, 0); len(got) != 0 {
		t.Fatalf("Changes of a new instance = %v, want none", got)
	}
	e.write(upsert("Account", "taken", at(0), map[string]any{"username": "ann"}))
	e.write(upsert("Book", "gone", at(0), map[string]any{"title": "Gone", "price": 3.5}))
	gone := e.get(e.inst, "Book", "gone")
	e.write(upsert("Author", "a1", at(0), map[string]any{"name": "Ann"}))

	trash := func(id string) store.Op { return store.Op{Kind: store.OpTrash, Type: "Book", ID: id, Now: at(5)} }
	untrash := func(id string) store.Op { return store.Op{Kind: store.OpUntrash, Type: "Book", ID: id, Now: at(6)} }
	ref := func(kind store.OpKind, id string) store.Op {
		return store.Op{Kind: kind, Type: "Author", ID: "a1", Field: "booklist", RefID: id, Now: at(7)}
	}
	del := func(typ, id string) store.Op { return store.Op{Kind: store.OpDelete, Type: typ, ID: id, Now: at(8)} }

	cases := []struct {
		name string
		ops  []store.Op
		fail error // the Write must fail with it
		want []store.Change
	}{
		{"create: every set field", []store.Op{upsert("Book", "b1", at(1), map[string]any{"title": "Dune", "price": 9.5, "authorid": nil})},
			nil, []store.Change{changeOf(store.ChangeCreated, "Book", "b1", "authorid", "price", "title")}},
		{"upsert of the values already there: none", []store.Op{upsert("Book", "b1", at(2), map[string]any{"title": "Dune", "price": 9.5})},
			nil, nil},
		{"null over absent: none", []store.Op{upsert("Book", "b1", at(2), map[string]any{"absent": nil})},
			nil, nil},
		{"update: the fields whose value changed", []store.Op{upsert("Book", "b1", at(3), map[string]any{"title": "Dune", "price": 10.0, "authorid": int64(4)})},
			nil, []store.Change{changeOf(store.ChangeUpdated, "Book", "b1", "authorid", "price")}},
		{"a number of the same value: none", []store.Op{upsert("Book", "b1", at(3), map[string]any{"price": int64(10)})},
			nil, nil},
		{"trash", []store.Op{trash("b1")}, nil, []store.Change{changeOf(store.ChangeTrashed, "Book", "b1")}},
		{"trash of a trashed record: none", []store.Op{trash("b1")}, nil, nil},
		{"untrash", []store.Op{untrash("b1")}, nil, []store.Change{changeOf(store.ChangeUntrashed, "Book", "b1")}},
		{"untrash of a live record: none", []store.Op{untrash("b1")}, nil, nil},
		{"link: UPDATED of the from record", []store.Op{ref(store.OpAddRef, "b1")}, nil,
			[]store.Change{changeOf(store.ChangeUpdated, "Author", "a1", "booklist")}},
		{"link again: none", []store.Op{ref(store.OpAddRef, "b1")}, nil, nil},
		{"unlink", []store.Op{ref(store.OpRemoveRef, "b1")}, nil,
			[]store.Change{changeOf(store.ChangeUpdated, "Author", "a1", "booklist")}},
		{"unlink again: none", []store.Op{ref(store.OpRemoveRef, "b1")}, nil, nil},
		{"delete: the record before", []store.Op{del("Book", "gone")}, nil,
			[]store.Change{{Op: store.ChangeDeleted, Type: "Book", ID: "gone", Before: gone}}},
		{"delete of a missing record: none", []store.Op{del("Book", "gone")}, nil, nil},
		{"trash and ref ops of a missing record: none", []store.Op{trash("nope"), untrash("nope"),
			{Kind: store.OpAddRef, Type: "Author", ID: "nope", Field: "booklist", RefID: "b1", Now: at(7)}}, nil, nil},
		{"a failed write (unique value taken): none", []store.Op{
			upsert("Book", "b2", at(9), map[string]any{"title": "never"}),
			upsert("Account", "u2", at(9), map[string]any{"username": "ann"}),
		}, store.ErrUnique, nil},
		{"a failed write (required field missing): none", []store.Op{
			{Kind: store.OpUpsert, Type: "Book", ID: "b3", Set: map[string]any{"price": 1.0}, Required: []string{"title"}, Now: at(9)},
		}, store.ErrRequired, nil},
		{"one change per op that changed something, in op order", []store.Op{
			upsert("Book", "b4", at(10), map[string]any{"title": "Four"}),
			upsert("Book", "b1", at(10), map[string]any{"title": "Dune"}),
			upsert("Book", "b5", at(10), map[string]any{"title": "Five"}),
			upsert("Book", "b4", at(11), map[string]any{"title": "Four, again"}),
		}, nil, []store.Change{
			changeOf(store.ChangeCreated, "Book", "b4", "title"),
			changeOf(store.ChangeCreated, "Book", "b5", "title"),
			changeOf(store.ChangeUpdated, "Book", "b4", "title"),
		}},
	}
	for _, tt := range cases {
		last := e.lastChange(e.s, e.inst)
		_, err := e.s.Write(e.ctx, e.inst, tt.ops, store.Quota{})
		switch {
		case tt.fail == nil && err != nil:
			t.Fatalf("%s: Write: %v", tt.name, err)
		case tt.fail != nil && !errors.Is(err, tt.fail):
			t.Fatalf("%s: Write = %v, want %v", tt.name, err, tt.fail)
		}
		got := e.newChanges(e.s, e.inst, last)
		if d := cmp.Diff(tt.want, got, ignoreSeqTime, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s: changes (-want +got):\n%s", tt.name, d)
		}
		if want := last + uint64(len(got)); e.lastChange(e.s, e.inst) != want {
			t.Errorf("%s: LastChange = %d, want %d", tt.name, e.lastChange(e.s, e.inst), want)
		}
	}
}

func testChangesPaging(t *testing.T, e *env) {
	e.declare(e.inst)
	for i := range 10 {
		e.write(upsert("Book", fmt.Sprintf("b%d", i), at(i), map[string]any{"title": "t"}))
	}
	if got := e.lastChange(e.s, e.inst); got != 10 {
		t.Fatalf("LastChange = %d, want 10", got)
	}
	pages := []struct {
		after uint64
		limit int
		want  []uint64
	}{
		{0, 3, []uint64{1, 2, 3}},
		{3, 3, []uint64{4, 5, 6}},
		{8, 5, []uint64{9, 10}},
		{10, 5, nil},
		{99, 5, nil},
	}
	for _, p := range pages {
		got, err := e.s.Changes(e.ctx, e.inst, p.after, p.limit)
		if err != nil {
			t.Fatalf("Changes(after %d, limit %d): %v", p.after, p.limit, err)
		}
		var seqs []uint64
		for _, c := range got {
			seqs = append(seqs, c.Seq)
			if want := fmt.Sprintf("b%d", c.Seq-1); c.ID != want || c.Op != store.ChangeCreated {
				t.Errorf("change %d is %s of %s, want CREATED of %s", c.Seq, c.Op, c.ID, want)
			}
		}
		if d := cmp.Diff(p.want, seqs, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("Changes(after %d, limit %d) (-want +got):\n%s", p.after, p.limit, d)
		}
	}
	if _, err := e.s.Changes(e.ctx, e.inst, 0, 0); err == nil {
		t.Error("Changes with limit 0 did not fail")
	}
	other := otherInstance()
	if got := e.newChanges(e.s, other, 0); len(got) != 0 {
		t.Errorf("another instance sees %d changes", len(got))
	}
}

// testChangeOrder has 8 writers at once: the changes are numbered
// 1..N without a gap and each record's changes are in its write order.
func testChangeOrder(t *testing.T, e *env) {
	e.declare(e.inst)
	const workers, each = 8, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				op := upsert("Book", fmt.Sprintf("w%d", w), at(i), map[string]any{fmt.Sprintf("s%02d", i): true})
				if _, err := e.s.Write(e.ctx, e.inst, []store.Op{op}, store.Quota{}); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	got := e.newChanges(e.s, e.inst, 0) // checks 1..N
	if len(got) != workers*each {
		t.Fatalf("%d changes, want %d", len(got), workers*each)
	}
	next := map[string]int{}
	for _, c := range got {
		i := next[c.ID]
		next[c.ID]++
		wantOp := store.ChangeUpdated
		if i == 0 {
			wantOp = store.ChangeCreated
		}
		if d := cmp.Diff(changeOf(wantOp, "Book", c.ID, fmt.Sprintf("s%02d", i)), c, ignoreSeqTime); d != "" {
			t.Fatalf("change %d is not write %d of %s (-want +got):\n%s", c.Seq, i, c.ID, d)
		}
	}
}

func testChangeRetention(t *testing.T, e *env, opts Options) {
	if opts.OpenRetention == nil {
		t.Skip("no OpenRetention")
	}
	write := func(e *env, n int) {
		for i := range n {
			e.write(upsert("Book", fmt.Sprintf("b%d", i), at(i), map[string]any{"title": "t"}))
		}
	}
	// retained is a new store keeping the feed as r, and an instance.
	retained := func(t *testing.T, r store.Retention) *env {
		e := &env{t: t, s: opts.OpenRetention(t, r), ctx: context.Background(), inst: otherInstance()}
		t.Cleanup(func() { e.s.Close() })
		return e
	}
	// fresh writes n changes, each a new record's.
	fresh := func(e *env, n int) {
		for range n {
			e.write(upsert("Book", store.NewID(), at(0), map[string]any{"title": "t"}))
		}
	}
	t.Run("count bound", func(t *testing.T) {
		e := retained(t, store.Retention{Count: 5})
		write(e, 40)
		if got := e.lastChange(e.s, e.inst); got != 40 {
			t.Fatalf("LastChange = %d, want 40", got)
		}
		_, err := e.s.Changes(e.ctx, e.inst, 0, 100)
		if !errors.Is(err, store.ErrHistoryGone) {
			t.Fatalf("Changes from the start = %v, want ErrHistoryGone", err)
		}
		if got := e.newChanges(e.s, e.inst, 35); len(got) != 5 {
			t.Errorf("the newest 5 are not kept: %d changes after 35", len(got))
		}
	})
	t.Run("a hold keeps the changes after it", func(t *testing.T) {
		e := retained(t, store.Retention{Count: 5})
		fresh(e, 10)
		if err := e.s.HoldChanges(e.ctx, e.inst, 8, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		fresh(e, 40)
		if got := e.newChanges(e.s, e.inst, 8); len(got) != 42 {
			t.Errorf("%d changes after the hold at 8, want all 42", len(got))
		}
		if _, err := e.s.Changes(e.ctx, e.inst, 0, 100); !errors.Is(err, store.ErrHistoryGone) {
			t.Errorf("Changes from before the hold = %v, want ErrHistoryGone", err)
		}
		// Released, the feed goes back to its bound, a few trims at a time.
		if err := e.s.HoldChanges(e.ctx, e.inst, 0, time.Time{}); err != nil {
			t.Fatal(err)
		}
		fresh(e, 20)
		if _, err := e.s.Changes(e.ctx, e.inst, 8, 100); !errors.Is(err, store.ErrHistoryGone) {
			t.Errorf("Changes after the released hold = %v, want ErrHistoryGone", err)
		}
		if got := e.newChanges(e.s, e.inst, 65); len(got) != 5 {
			t.Errorf("the newest 5 are not kept: %d changes after 65", len(got))
		}
	})
	t.Run("a hold that has ended keeps nothing", func(t *testing.T) {
		e := retained(t, store.Retention{Count: 5})
		fresh(e, 10)
		if err := e.s.HoldChanges(e.ctx, e.inst, 8, time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		fresh(e, 20)
		if _, err := e.s.Changes(e.ctx, e.inst, 8, 100); !errors.Is(err, store.ErrHistoryGone) {
			t.Errorf("Changes after an ended hold = %v, want ErrHistoryGone", err)
		}
	})
	t.Run("age keeps more than count", func(t *testing.T) {
		e := retained(t, store.Retention{Age: 24 * 365 * 3600e9, Count: 5})
		write(e, 40)
		if got := e.newChanges(e.s, e.inst, 0); len(got) != 40 {
			t.Errorf("%d changes kept, want all 40 (younger than Age)", len(got))
		}
	})
}

// testWait: a Wait returns once a write commits (progress, not timing),
// at once when a change is there already, and with ctx's error.
func testWait(t *testing.T, e *env, opts Options) {
	e.declare(e.inst)
	e.write(upsert("Book", "b0", at(0), map[string]any{"title": "t"}))
	waitWakes := func(t *testing.T, waiter, writer store.Store, inst string) {
		t.Helper()
		last := e.lastChange(writer, inst)
		done := make(chan error, 1)
		go func() {
			got, err := waiter.Wait(e.ctx, inst, last)
			if err == nil && got <= last {
				err = fmt.Errorf("Wait returned %d, not past %d", got, last)
			}
			done <- err
		}()
		if _, err := writer.Write(e.ctx, inst, []store.Op{upsert("Book", store.NewID(), at(1), map[string]any{"title": "new"})}, store.Quota{}); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	t.Run("wakes on a write", func(t *testing.T) { waitWakes(t, e.s, e.s, e.inst) })
	t.Run("wakes every waiter", func(t *testing.T) {
		last := e.lastChange(e.s, e.inst)
		var wg sync.WaitGroup
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got, err := e.s.Wait(e.ctx, e.inst, last); err != nil || got <= last {
					t.Errorf("Wait = %d, %v", got, err)
				}
			}()
		}
		e.write(upsert("Book", "b0", at(2), map[string]any{"title": "changed"}))
		wg.Wait()
	})
	t.Run("returns at once when a change is there", func(t *testing.T) {
		last := e.lastChange(e.s, e.inst)
		if got, err := e.s.Wait(e.ctx, e.inst, last-1); err != nil || got != last {
			t.Errorf("Wait(%d) = %d, %v; want %d", last-1, got, err, last)
		}
	})
	t.Run("ends with the context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(e.ctx)
		cancel()
		if _, err := e.s.Wait(ctx, e.inst, e.lastChange(e.s, e.inst)); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait with a canceled context = %v", err)
		}
	})
	t.Run("another instance's write does not count", func(t *testing.T) {
		other := otherInstance()
		e.declare(other)
		e.writeIn(other, upsert("Book", "x", at(1), map[string]any{"title": "x"}))
		if got := e.lastChange(e.s, e.inst); got != 3 {
			t.Errorf("LastChange = %d after another instance's write, want 3", got)
		}
	})
	if opts.SecondHandle == nil {
		return
	}
	t.Run("a write through another handle", func(t *testing.T) {
		s2 := opts.SecondHandle(t, e.s)
		waitWakes(t, s2, e.s, e.inst)
		waitWakes(t, e.s, s2, e.inst)
	})
	t.Run("two handles writing at once number without a gap", func(t *testing.T) {
		s2 := opts.SecondHandle(t, e.s)
		inst := otherInstance()
		e.declare(inst)
		const each = 15
		var wg sync.WaitGroup
		for h, s := range []store.Store{e.s, s2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					op := upsert("Book", fmt.Sprintf("h%d-%d", h, i), at(i), map[string]any{"title": "t"})
					if _, err := s.Write(e.ctx, inst, []store.Op{op}, store.Quota{}); err != nil {
						t.Errorf("handle %d: %v", h, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, s := range []store.Store{e.s, s2} {
			if got := e.newChanges(s, inst, 0); len(got) != 2*each {
				t.Errorf("%d changes, want %d", len(got), 2*each)
			}
		}
	})
}

func testDropChanges(t *testing.T, e *env) {
	e.declare(e.inst)
	e.write(upsert("Book", "b", at(0), map[string]any{"title": "t"}))
	if err := e.s.DropInstance(e.ctx, e.inst); err != nil {
		t.Fatal(err)
	}
	if got := e.lastChange(e.s, e.inst); got != 0 {
		t.Errorf("LastChange after DropInstance = %d, want 0", got)
	}
	if got := e.newChanges(e.s, e.inst, 0); len(got) != 0 {
		t.Errorf("%d changes after DropInstance", len(got))
	}
}
