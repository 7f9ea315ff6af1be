package fn

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Fair share of the runtime: besides the server's bound on calls running
// at once (Config.MaxConcurrent), each instance may run at most its share
// at once (Invocation.MaxConcurrent, the instance's setting; by default a
// quarter of the bound; never more than the bound), so that one
// instance's flood leaves room for the others. A call over its instance's
// share waits for one of that instance's calls to end, until its
// deadline (then ErrBusy). A call a function makes back (through
// core.graphql) runs within its caller's share: it takes no slot of its
// own, or a chain of calls could wait on itself. A changed share applies
// to the calls that start after the change.

// fairShare counts the calls each instance runs. Safe for concurrent use.
type fairShare struct {
	mu    sync.Mutex
	slots map[string]*instanceSlots
}

type instanceSlots struct {
	sem   chan struct{}
	users int // calls holding or waiting for a slot
}

// acquire waits for a slot of instance inst, which may run limit calls
// at once, and returns its release; ErrBusy when ctx ends first because
// of the call's deadline.
func (f *fairShare) acquire(ctx context.Context, inst string, limit int) (func(), error) {
	f.mu.Lock()
	if f.slots == nil {
		f.slots = map[string]*instanceSlots{}
	}
	s := f.slots[inst]
	if s == nil || cap(s.sem) != limit {
		// A changed share counts from the calls that start now; the
		// running ones release the slots they took.
		s = &instanceSlots{sem: make(chan struct{}, limit)}
		f.slots[inst] = s
	}
	s.users++
	f.mu.Unlock()
	leave := func() {
		f.mu.Lock()
		if s.users--; s.users == 0 && f.slots[inst] == s {
			delete(f.slots, inst)
		}
		f.mu.Unlock()
	}
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem; leave() }, nil
	case <-ctx.Done():
		leave()
		if errors.Is(context.Cause(ctx), errDeadline) {
			return nil, fmt.Errorf("%w (%d at once) %w", ErrShareBusy, cap(s.sem), ErrBusy)
		}
		return nil, fmt.Errorf("fn: waiting for the instance's share: %w", ctx.Err())
	}
}

// calls is the number of calls of inst that hold or wait for a slot.
func (f *fairShare) calls(inst string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.slots[inst]; s != nil {
		return s.users
	}
	return 0
}

// running is the number of instances with calls (for tests).
func (f *fairShare) running() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.slots)
}

// instanceShare is the calls an instance may run at once: its setting
// (0: a quarter of the bound), at least 1 and at most the bound.
func (c Config) instanceShare(setting int) int {
	if setting <= 0 {
		setting = c.MaxConcurrent / 4
	}
	return min(max(setting, 1), c.MaxConcurrent)
}
