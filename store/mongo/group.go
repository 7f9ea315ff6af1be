package mongo

import "sync"

// group is a group commit: concurrent callers add their work to the open
// batch, and one caller at a time flushes a batch, so that N callers
// arriving while a flush is under way cost one more flush, not N. The
// Store keeps one per instance for its change-feed appends (changes.go):
// without it, every writer of an instance waited for every other's round
// trip. (Usage deltas, which no caller waits for, have a queue of their
// own: usageQueue, usage.go.)
//
// A caller that finds no flush under way detaches the open batch (its own
// work and whatever joined before) and flushes it. Callers arriving
// meanwhile join a new open batch and wait. When a flush ends, the batch's
// callers are released, then its after work runs (on a goroutine of its
// own, so that no caller waits for it), and then the turn goes to the open
// batch, if any: exactly one of its waiters wakes and flushes it. So a
// caller flushes at most the
// batch holding its own work and never waits for more than the flush
// under way (and its after work) and its own; each batch is flushed
// exactly once, and the flushes of one group never overlap.
//
// A caller cannot leave early: its work is in a batch that another caller
// may be flushing, and leaving would lose the turn it may be handed. flush
// and after must therefore end by themselves (the store's operations are
// bounded by Config.OpTimeout) and must not panic.
type group[B any] struct {
	mu       sync.Mutex
	flushing bool      // a flush or its after work is under way, or the turn was handed to a waiter
	open     *batch[B] // the batch new work joins; nil when none
}

// batch is the work of the callers that joined it.
type batch[B any] struct {
	val  B
	turn chan struct{} // one token when a waiter is to flush this batch
	done chan struct{} // closed when this batch was flushed
}

// do adds work to the open batch with add (run under the group's lock, so
// it must be quick) and returns once a flush of that batch has ended, with
// the batch's value as flush left it: flush records its outcome there
// (for every caller, or per caller through pointers add put there).
// after, when not nil, may read the value but not change it.
func (g *group[B]) do(add func(*B), flush func(*B), after func(*B)) *B {
	g.mu.Lock()
	b := g.open
	if b == nil {
		b = &batch[B]{turn: make(chan struct{}, 1), done: make(chan struct{})}
		g.open = b
	}
	add(&b.val)
	lead := !g.flushing
	g.flushing = true
	g.mu.Unlock()
	if !lead {
		select {
		case <-b.done:
			return &b.val
		case <-b.turn:
		}
	}
	// This caller flushes b, which is still the open batch: only the
	// caller flushing a batch detaches it.
	g.mu.Lock()
	g.open = nil
	g.mu.Unlock()
	flush(&b.val)
	close(b.done)
	if after == nil {
		g.handOff()
	} else {
		go func() {
			after(&b.val)
			g.handOff()
		}()
	}
	return &b.val
}

// handOff ends a flush: the open batch, if any, gets the turn.
func (g *group[B]) handOff() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open != nil {
		g.open.turn <- struct{}{}
	} else {
		g.flushing = false
	}
}

// instBatches are the group commit of one instance's change-feed appends
// in this process and its queue of usage deltas.
type instBatches struct {
	usage   usageQueue         // usage deltas not yet written (addUsage)
	changes group[changeBatch] // change-feed appends (appendChange)
}

// batchesOf returns the instance's group commits, made on first use and
// kept for the life of the Store (a few words per instance it wrote).
func (s *Store) batchesOf(inst string) *instBatches {
	s.mu.RLock()
	b := s.batches[inst]
	s.mu.RUnlock()
	if b != nil {
		return b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b = s.batches[inst]; b == nil {
		b = &instBatches{}
		s.batches[inst] = b
	}
	return b
}
