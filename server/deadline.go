package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineCtx is a request's context with the server's request time-out:
// context.WithDeadline's behaviour, but its timer (and its registration
// with the parent) starts only when something waits on Done or the
// deadline has passed. Most requests never wait: a read on the embedded
// store runs to its end and checks the deadline itself (Err, Deadline),
// so they skip a timer and a cancel registration each, which were 4 % of
// a GET by id's CPU.
//
// Once started, everything is the WithDeadline context's own: Done, Err,
// Value (so context.Cause and the children context.WithCancel makes see
// a cancelCtx) and AfterFunc (so those children need no goroutine). Before
// it starts, Value is the parent's: context.Cause of this context itself
// reports the parent's cause until Err or Done has been asked (the
// children that functions and the store make have causes of their own).
type deadlineCtx struct {
	parent   context.Context
	deadline time.Time

	once   sync.Once
	inner  atomic.Pointer[context.Context] // set by start
	cancel context.CancelFunc
}

// withDeadline returns a context that ends at d or with parent; its
// release is context.WithDeadline's cancel.
func withDeadline(parent context.Context, d time.Time) *deadlineCtx {
	if pd, ok := parent.Deadline(); ok && pd.Before(d) {
		d = pd
	}
	return &deadlineCtx{parent: parent, deadline: d}
}

// start makes the WithDeadline context, once.
func (c *deadlineCtx) start() context.Context {
	c.once.Do(func() {
		inner, cancel := context.WithDeadline(c.parent, c.deadline)
		c.cancel = cancel
		c.inner.Store(&inner)
	})
	return *c.inner.Load()
}

// started returns the WithDeadline context, nil before start.
func (c *deadlineCtx) started() context.Context {
	if p := c.inner.Load(); p != nil {
		return *p
	}
	return nil
}

// release cancels the started context; a context never started holds
// nothing to release. It must not be called while the request still
// uses the context.
func (c *deadlineCtx) release() {
	if c.started() != nil {
		c.cancel()
	}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *deadlineCtx) Done() <-chan struct{} { return c.start().Done() }

// Err is nil until the parent ends or the deadline passes; then it starts
// the context, whose Err says which (DeadlineExceeded or the parent's).
func (c *deadlineCtx) Err() error {
	if inner := c.started(); inner != nil {
		return inner.Err()
	}
	if c.parent.Err() == nil && time.Now().Before(c.deadline) {
		return nil
	}
	return c.start().Err()
}

func (c *deadlineCtx) Value(key any) any {
	if inner := c.started(); inner != nil {
		return inner.Value(key)
	}
	return c.parent.Value(key)
}

// AfterFunc runs f when the context ends, as context.AfterFunc does; the
// context package uses it for the children of a context it did not make.
func (c *deadlineCtx) AfterFunc(f func()) (stop func() bool) {
	return context.AfterFunc(c.start(), f)
}
