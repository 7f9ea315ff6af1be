package store

import (
	"context"
	"errors"
	"math"
	"sort"
	"sync"
	"time"
)

// The change feed. Every Write appends one Change per op that changed
// something, numbered per instance in commit order (Change.Seq); readers
// page through them with Changes and wait for new ones with Wait. The
// feed is what subscriptions read: a subscriber remembers the Seq it
// delivered last and asks for the changes after it.
//
// What counts as a change, for every store alike (ChangedFields, OpChange):
//   - OpUpsert that creates: CREATED, Changed every key of Set.
//   - OpUpsert of an existing record: UPDATED, Changed the keys of Set
//     whose value differs from the stored one (numbers compare by value,
//     absent and null are the same). An upsert that sets only the values
//     already there gives no change: subscribers see values, and
//     core.updated alone moving is not worth an event.
//   - OpDelete of an existing record: DELETED, Before the record as it was
//     (filters of a DELETED event apply to it; the record is gone).
//   - OpTrash of a live record: TRASHED; OpUntrash of a trashed one:
//     UNTRASHED (Changed empty). Trashing a trashed record gives none.
//   - OpAddRef / OpRemoveRef that edit the list: UPDATED of the record
//     holding it, Changed the field. An edit that changes nothing gives none.
//
// A Change holds no record except Before: the subscriber reads the record
// when it delivers the event, so the feed stays small.

// ChangeOp is what a change did to its record; the names are those of the
// GraphQL enum CoreChangeOp.
type ChangeOp string

// The ops of changes.
const (
	ChangeCreated   ChangeOp = "CREATED"
	ChangeUpdated   ChangeOp = "UPDATED"
	ChangeDeleted   ChangeOp = "DELETED"
	ChangeTrashed   ChangeOp = "TRASHED"
	ChangeUntrashed ChangeOp = "UNTRASHED"
)

// Change is one entry of an instance's change feed.
type Change struct {
	// Seq numbers the instance's changes from 1, without gaps, in commit
	// order: a reader never sees Seq n+1 before Seq n.
	Seq uint64
	// Time is when the store recorded the change (its clock; retention
	// counts from it).
	Time time.Time
	Op   ChangeOp
	Type string
	ID   string
	// Changed names the fields whose value changed, sorted; empty for
	// DELETED, TRASHED and UNTRASHED.
	Changed []string
	// Before is the record as it was before a DELETED; nil otherwise.
	Before *Record
}

// ErrHistoryGone: the changes a reader asks for have been trimmed
// (retention); it must read the records afresh and resume from
// LastChange.
var ErrHistoryGone = errors.New("store: change history gone: the changes after this point are no longer retained; refetch the records and resume from the newest change")

// Hold is a reader's hold on an instance's feed (Store.HoldChanges): the
// changes after After are kept until Until.
type Hold struct {
	After uint64
	Until time.Time
}

// MaxHeld bounds the changes a Hold keeps: an event hook whose endpoint
// fails for a day loses nothing on an instance that writes up to about
// three changes a second, and no reader makes a store keep more than
// this per instance.
const MaxHeld = 250_000

// Limit is the newest Seq a trim may delete under the hold at now, the
// feed's newest being last: After, or last-MaxHeld when After is
// further back; the largest Seq when the hold has ended (or is none).
func (h Hold) Limit(last uint64, now time.Time) uint64 {
	if !now.Before(h.Until) {
		return math.MaxUint64
	}
	if last > MaxHeld && h.After < last-MaxHeld {
		return last - MaxHeld
	}
	return h.After
}

// Retention is how much of an instance's feed a store keeps: a change is
// trimmed only when it is older than Age AND not among the newest Count,
// so the feed holds whichever is more. Age 0 bounds by Count alone; Count
// is at least 1, so the newest change is always kept.
type Retention struct {
	Age   time.Duration
	Count int
}

// DefaultRetention keeps the last hour and at least the newest 10,000
// changes of each instance.
func DefaultRetention() Retention { return Retention{Age: time.Hour, Count: 10000} }

// Normalized is r with the default for the zero Retention and Count at
// least 1.
func (r Retention) Normalized() Retention {
	if r == (Retention{}) {
		return DefaultRetention()
	}
	if r.Count < 1 {
		r.Count = 1
	}
	if r.Age < 0 {
		r.Age = 0
	}
	return r
}

// TrimEvery is how many changes a store appends between two trims of an
// instance's feed: an eighth of Count, between 1 and 256, so the feed
// holds at most that many beyond its bound and trimming costs a seek per
// that many changes, not per write.
func (r Retention) TrimEvery() uint64 {
	return uint64(min(max(r.Count/8, 1), 256))
}

// MaxTrim bounds the changes one trim of the embedded store deletes:
// after a hold ends, the changes it kept go a few times TrimEvery at a
// time, at each trim point, rather than in one transaction as large as
// the hold.
func (r Retention) MaxTrim() int { return 8 * int(r.TrimEvery()) }

// TrimDue reports whether appending the changes after prev up to last
// crosses a trim point (a multiple of TrimEvery).
func (r Retention) TrimDue(prev, last uint64) bool {
	n := r.TrimEvery()
	return last/n != prev/n
}

// OpChange returns the change an applied op makes of a record, with old
// the record before (nil when there was none) and next the record after
// (nil for a delete); ok is false when the op changed nothing. Seq and
// Time are left for the store.
func OpChange(op *Op, old, next *Record) (c Change, ok bool) {
	c = Change{Type: op.Type, ID: op.ID}
	switch {
	case op.Kind == OpDelete:
		if old == nil {
			return c, false
		}
		c.Op, c.Before = ChangeDeleted, old
	case op.Kind == OpUpsert && old == nil:
		c.Op, c.Changed = ChangeCreated, sortedKeys(op.Set)
	case op.Kind == OpUpsert:
		c.Op, c.Changed = ChangeUpdated, ChangedFields(old.Fields, op.Set)
		if len(c.Changed) == 0 {
			return c, false
		}
	case old == nil || next == nil:
		return c, false
	case op.Kind == OpTrash:
		if old.Trashed != nil || next.Trashed == nil {
			return c, false
		}
		c.Op = ChangeTrashed
	case op.Kind == OpUntrash:
		if old.Trashed == nil || next.Trashed != nil {
			return c, false
		}
		c.Op = ChangeUntrashed
	case op.Kind.IsEdit():
		for _, f := range op.EditedFields() {
			if !SameValue(old.Fields[f], next.Fields[f]) {
				c.Changed = append(c.Changed, f)
			}
		}
		if len(c.Changed) == 0 {
			return c, false
		}
		c.Op = ChangeUpdated
	default:
		return c, false
	}
	return c, true
}

// sortedKeys returns the keys of m, sorted, in a slice of their number (a
// create notes every field it sets); nil for none, as slices.Sorted.
func sortedKeys(m map[string]any) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ChangedFields returns, sorted, the keys of set whose value differs from
// the one in fields (SameValue).
func ChangedFields(fields, set map[string]any) []string {
	var out []string
	for k, v := range set {
		if !SameValue(fields[k], v) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// SameValue reports whether two field values are the same value: numbers
// by value whatever their type (int64 or float64), lists element by
// element, objects key by key, timestamps by instant; nil is the same as
// nil only.
func SameValue(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case int64:
		switch b := b.(type) {
		case int64:
			return a == b
		case float64:
			return float64(a) == b
		}
		return false
	case float64:
		switch b := b.(type) {
		case int64:
			return a == float64(b)
		case float64:
			return a == b
		}
		return false
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case time.Time:
		bt, ok := b.(time.Time)
		return ok && a.Equal(bt)
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !SameValue(a[i], bl[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			w, ok := bm[k]
			if !ok || !SameValue(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// Waiters is what a store uses to wake the callers of Wait: each waits on
// the channel of its instance, which Wake closes (and replaces). A store
// Wakes an instance after a write of it commits (and, on a database other
// processes write too, when its polling sees one). Safe for concurrent use.
type Waiters struct {
	mu sync.Mutex
	m  map[string]*waitSet
}

type waitSet struct {
	ch     chan struct{}
	afters map[uint64]int // the after of each waiter → how many wait on it
}

// Add registers a waiter of inst for the changes after after, and returns
// the channel that Wake closes and the function that unregisters it (call
// it once, when the wait ends).
func (w *Waiters) Add(inst string, after uint64) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]*waitSet{}
	}
	ws := w.m[inst]
	if ws == nil {
		ws = &waitSet{ch: make(chan struct{}), afters: map[uint64]int{}}
		w.m[inst] = ws
	}
	ws.afters[after]++
	ch := ws.ch
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if ws.afters[after]--; ws.afters[after] == 0 {
			delete(ws.afters, after)
		}
		if len(ws.afters) == 0 && w.m[inst] == ws {
			delete(w.m, inst)
		}
	}
}

// Wait is Store.Wait over these waiters: it registers, then reads the
// instance's newest change with last (so a commit between the two still
// wakes it), and waits for a wake-up until there is a change after
// after, ctx ends or closed closes (then closedErr).
func (w *Waiters) Wait(ctx context.Context, inst string, after uint64, last func(context.Context, string) (uint64, error),
	closed <-chan struct{}, closedErr error) (uint64, error) {
	for {
		ch, done := w.Add(inst, after)
		newest, err := last(ctx, inst)
		if err != nil || newest > after {
			done()
			return newest, err
		}
		select {
		case <-ch:
			done()
		case <-ctx.Done():
			done()
			return 0, ctx.Err()
		case <-closed:
			done()
			return 0, closedErr
		}
	}
}

// Wake wakes every waiter of inst.
func (w *Waiters) Wake(inst string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ws := w.m[inst]; ws != nil {
		close(ws.ch)
		ws.ch = make(chan struct{})
	}
}

// Watched returns, per instance with waiters, the distinct afters they
// wait past: what a polling store looks for.
func (w *Waiters) Watched() map[string][]uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string][]uint64, len(w.m))
	for inst, ws := range w.m {
		for a := range ws.afters {
			out[inst] = append(out[inst], a)
		}
	}
	return out
}
