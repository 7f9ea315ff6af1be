package gql

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/corehq/core/access"
	"github.com/corehq/core/store"
)

// The shared reader of an instance's change feed. All the subscriptions
// of one instance in this process read the feed through one tail: one
// goroutine waits for the instance's changes (store.Store.Wait), reads
// each page of them once, and keeps the newest in memory
// (Config.SubscriptionTail, 1,024 by default), each
// with the record after its change, read once on first use. A thousand
// subscribers of an instance then cost one feed read and one record read
// per change, not a thousand; what stays per subscriber is what differs
// between them: the rights check, the filter and the execution of its
// document. A subscriber behind the tail (resuming after an older
// cursor) reads the store itself until it catches up.

// feedTail is the shared reader, the tail, of one instance's feed.
type feedTail struct {
	st     store.Store
	inst   string
	grants *access.Cache   // forgotten when the feed shows a grant changed
	ctx    context.Context // the reader's; ends when the last subscriber leaves
	cancel context.CancelFunc
	size   int // how many changes it keeps

	mu sync.Mutex
	// entries are the changes base+1 … base+len(entries), in order.
	base    uint64
	entries []*feedEntry
	// wake is closed and replaced when changes arrive or the reader fails.
	wake chan struct{}
	err  error
	subs int // subscriptions holding the tail (Subscriptions.tails counts them)
	// groups are the execution groups of its subscriptions, by shareKey.
	groups map[string]*execGroup
}

// forgetGrants drops the instance's grants from the cache when changes
// hold one of an AccessRight, before any subscriber sees the changes
// after it: the rights of those events are then read with that grant,
// wherever it was written. A find that reads stale grants answers
// better on its next request; an event decided on them would be lost
// (or leaked) for good. The cache alone, written to in another process
// (a shared MongoDB), would serve its snapshot for up to grantsTTL.
func forgetGrants(grants *access.Cache, inst string, changes []store.Change) {
	if grants == nil {
		return
	}
	for i := range changes {
		if changes[i].Type == access.Type {
			grants.Forget(inst)
			return
		}
	}
}

// feedEntry is one change of a tail, with the record after it.
type feedEntry struct {
	change store.Change
	once   sync.Once
	rec    *store.Record
	err    error
}

// record returns the record after the change (nil when it is gone since
// or the change is a DELETED: its Before is the record then), read once
// for every subscriber.
func (e *feedEntry) record(ctx context.Context, st store.Store, inst string) (*store.Record, error) {
	e.once.Do(func() { e.rec, e.err = readAfter(ctx, st, inst, &e.change) })
	return e.rec, e.err
}

// readAfter reads the record a change left (the record before it for a
// DELETED); nil when it is gone since (its DELETED follows).
func readAfter(ctx context.Context, st store.Store, inst string, ch *store.Change) (*store.Record, error) {
	if ch.Op == store.ChangeDeleted {
		return ch.Before, nil
	}
	r, err := st.Get(ctx, inst, ch.Type, ch.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return r, err
}

// acquireTail returns the tail of an instance's feed, starting its reader
// when it is the first subscription of the instance here; release it
// once the subscription ends.
func (s *Subscriptions) acquireTail(st store.Store, inst string, size int) (*feedTail, error) {
	if t := s.joinTail(inst); t != nil {
		return t, nil
	}
	// The store is read outside the lock: other instances' subscriptions
	// do not wait for it.
	newest, err := st.LastChange(s.streams, inst)
	if err != nil {
		return nil, err
	}
	s.tailsMu.Lock()
	defer s.tailsMu.Unlock()
	if t := s.joinLocked(inst); t != nil { // started meanwhile
		return t, nil
	}
	ctx, cancel := context.WithCancel(s.streams)
	t := &feedTail{st: st, inst: inst, grants: s.grants, ctx: ctx, cancel: cancel, size: max(size, 1), base: newest, wake: make(chan struct{}), subs: 1}
	if s.tails == nil {
		s.tails = map[string]*feedTail{}
	}
	s.tails[inst] = t
	go t.read()
	return t, nil
}

// joinTail counts one more holder of the instance's tail, if it has one
// whose reader runs. A tail whose reader failed (a store error) serves no
// new subscription: they start a fresh one, and the failed tail goes when
// its last holder releases it.
func (s *Subscriptions) joinTail(inst string) *feedTail {
	s.tailsMu.Lock()
	defer s.tailsMu.Unlock()
	return s.joinLocked(inst)
}

// joinLocked is joinTail with s.tailsMu held.
func (s *Subscriptions) joinLocked(inst string) *feedTail {
	if t := s.tails[inst]; t != nil && !t.failed() {
		t.subs++
		return t
	}
	return nil
}

// releaseTail ends a subscription's hold on t; the last one stops its
// reader.
func (s *Subscriptions) releaseTail(t *feedTail) {
	s.tailsMu.Lock()
	defer s.tailsMu.Unlock()
	if t.subs--; t.subs > 0 {
		return
	}
	t.cancel()
	if s.tails[t.inst] == t {
		delete(s.tails, t.inst)
	}
}

// read follows the feed until the feedTail's context ends or the store fails.
func (t *feedTail) read() {
	t.mu.Lock()
	last := t.newestLocked()
	t.mu.Unlock()
	for {
		changes, err := t.st.Changes(t.ctx, t.inst, last, changesPage)
		if errors.Is(err, store.ErrHistoryGone) {
			// The reader fell behind the retention (a store stalled
			// for long): start again from the newest change; the
			// subscribers behind it find the history gone themselves.
			last, err = t.st.LastChange(t.ctx, t.inst)
			if err == nil {
				t.restart(last)
				continue
			}
		}
		if err != nil {
			t.fail(err)
			return
		}
		if len(changes) > 0 {
			last = changes[len(changes)-1].Seq
			t.add(changes)
			continue
		}
		if _, err := t.st.Wait(t.ctx, t.inst, last); err != nil {
			t.fail(err)
			return
		}
	}
}

// add appends changes read from the feed, keeps the newest size and
// wakes the subscribers.
func (t *feedTail) add(changes []store.Change) {
	forgetGrants(t.grants, t.inst, changes)
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range changes {
		t.entries = append(t.entries, &feedEntry{change: changes[i]})
	}
	if over := len(t.entries) - t.size; over > 0 {
		clear(t.entries[:over])
		t.entries = append(t.entries[:0], t.entries[over:]...)
		t.base += uint64(over)
	}
	close(t.wake)
	t.wake = make(chan struct{})
}

// newestLocked is the change read last (or where the reader started),
// with t.mu held.
func (t *feedTail) newestLocked() uint64 { return t.base + uint64(len(t.entries)) }

// restart empties the feedTail, which now starts after newest.
func (t *feedTail) restart(newest uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.entries)
	t.entries = t.entries[:0]
	t.base = newest
}

// fail records why the reader stopped and wakes the subscribers, which
// end with it (a closed feedTail's context: the subscriptions are ending).
func (t *feedTail) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.err = err
	close(t.wake)
	t.wake = make(chan struct{})
}

// failed reports whether the reader has stopped on an error.
func (t *feedTail) failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err != nil
}

// after returns up to limit entries after seq, or, when there are none
// yet, a channel closed when there may be. behind is true when seq is
// older than the feedTail holds: the caller reads the store itself. err is
// the reader's failure.
func (t *feedTail) after(seq uint64, limit int) (entries []*feedEntry, wake <-chan struct{}, behind bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return nil, nil, false, t.err
	}
	if seq < t.base {
		return nil, nil, true, nil
	}
	if seq >= t.newestLocked() {
		return nil, t.wake, false, nil
	}
	from := seq - t.base
	to := min(uint64(len(t.entries)), from+uint64(limit))
	return append([]*feedEntry(nil), t.entries[from:to]...), nil, false, nil
}

// Subscriptions that would execute the same document the same way share
// each event's execution: same schema, caller (principal kind and
// account), document, operation and variables (shareKey). The first of
// them to deliver a change executes it; the others take its event from
// their group's ring of the last groupRing events, as long as they keep
// up with each other (one that lags further executes for itself). A
// public feed watched by a thousand anonymous visitors then costs one
// execution per change; a thousand accounts, each its own, cost a
// thousand. A group of one keeps nothing, and an event is kept only up
// to groupEventMax bytes: a group holds at most groupRing of them.

// groupRing is how many of a group's newest events it keeps.
const groupRing = 64

// groupEventMax is the largest event (its JSON) a group keeps.
const groupEventMax = 8 << 10

// execGroup is the events of one shareKey, by change.
type execGroup struct {
	key     string
	members atomic.Int32 // changed under the tail's mu
	mu      sync.Mutex
	ring    [groupRing]groupEvent
}

// groupEvent is one change's event for a group: ok false when the group
// does not see the change.
type groupEvent struct {
	seq uint64
	ev  Event
	ok  bool
}

// lookup returns the group's event of change seq, if one member made it.
func (g *execGroup) lookup(seq uint64) (Event, bool, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := &g.ring[seq%groupRing]; s.seq == seq {
		return s.ev, s.ok, true
	}
	return Event{}, false, false
}

// keep records the group's event of change seq.
func (g *execGroup) keep(seq uint64, ev Event, ok bool) {
	if g.members.Load() < 2 || len(ev.payload) > groupEventMax {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := &g.ring[seq%groupRing]; s.seq < seq {
		*s = groupEvent{seq: seq, ev: ev, ok: ok}
	}
}

// join returns the group of key, counting a member.
func (t *feedTail) join(key string) *execGroup {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.groups[key]
	if g == nil {
		if t.groups == nil {
			t.groups = map[string]*execGroup{}
		}
		g = &execGroup{key: key}
		t.groups[key] = g
	}
	g.members.Add(1)
	return g
}

// leave ends a member's part in g; the last one drops it.
func (t *feedTail) leave(g *execGroup) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if g.members.Add(-1) == 0 && t.groups[g.key] == g {
		delete(t.groups, g.key)
	}
}
