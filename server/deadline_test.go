package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// TestDeadlineContextIsLazy: reading a request's context (its deadline,
// Err, values) starts no timer; waiting on Done does.
func TestDeadlineContextIsLazy(t *testing.T) {
	parent := context.WithValue(t.Context(), ctxKey{}, "v")
	d := time.Now().Add(time.Hour)
	c := withDeadline(parent, d)
	defer c.release()
	if got, ok := c.Deadline(); !ok || !got.Equal(d) {
		t.Errorf("Deadline() = %v, %v; want %v, true", got, ok, d)
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err() before the deadline = %v", err)
	}
	if got := c.Value(ctxKey{}); got != "v" {
		t.Errorf("Value = %v, want the parent's v", got)
	}
	if c.started() != nil {
		t.Fatal("reading the context started its timer")
	}
	select {
	case <-c.Done():
		t.Fatal("Done is closed an hour before the deadline")
	default:
	}
	if c.started() == nil {
		t.Fatal("Done did not start the context")
	}
	if got := c.Value(ctxKey{}); got != "v" {
		t.Errorf("Value once started = %v, want the parent's v", got)
	}
	c.release()
	<-c.Done()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Errorf("Err() after release = %v, want context.Canceled", c.Err())
	}
}

// TestDeadlineContextEnds: the context ends at its deadline, whether or
// not anything waited on it, and with its parent; its children and
// AfterFunc follow.
func TestDeadlineContextEnds(t *testing.T) {
	t.Run("past deadline, never waited on", func(t *testing.T) {
		c := withDeadline(t.Context(), time.Now().Add(-time.Millisecond))
		defer c.release()
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Errorf("Err() = %v, want context.DeadlineExceeded", c.Err())
		}
		<-c.Done()
		if !errors.Is(context.Cause(c), context.DeadlineExceeded) {
			t.Errorf("Cause = %v, want context.DeadlineExceeded", context.Cause(c))
		}
	})
	t.Run("deadline passes while waiting", func(t *testing.T) {
		c := withDeadline(t.Context(), time.Now().Add(20*time.Millisecond))
		defer c.release()
		child, cancel := context.WithCancel(c)
		defer cancel()
		ran := make(chan struct{})
		stop := context.AfterFunc(c, func() { close(ran) })
		defer stop()
		<-c.Done()
		<-child.Done()
		<-ran
		if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Errorf("Err() = %v, child's %v; want context.DeadlineExceeded", c.Err(), child.Err())
		}
	})
	t.Run("parent canceled", func(t *testing.T) {
		parent, cancelParent := context.WithCancel(t.Context())
		c := withDeadline(parent, time.Now().Add(time.Hour))
		defer c.release()
		child, cancel := context.WithCancel(c)
		defer cancel()
		cancelParent()
		<-child.Done()
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(child.Err(), context.Canceled) {
			t.Errorf("Err() = %v, child's %v; want context.Canceled", c.Err(), child.Err())
		}
	})
	t.Run("parent canceled, never waited on", func(t *testing.T) {
		parent, cancelParent := context.WithCancel(t.Context())
		c := withDeadline(parent, time.Now().Add(time.Hour))
		defer c.release()
		cancelParent()
		if !errors.Is(c.Err(), context.Canceled) {
			t.Errorf("Err() = %v, want context.Canceled", c.Err())
		}
	})
	t.Run("parent's earlier deadline", func(t *testing.T) {
		pd := time.Now().Add(time.Minute)
		parent, cancel := context.WithDeadline(t.Context(), pd)
		defer cancel()
		c := withDeadline(parent, time.Now().Add(time.Hour))
		defer c.release()
		if got, _ := c.Deadline(); !got.Equal(pd) {
			t.Errorf("Deadline() = %v, want the parent's %v", got, pd)
		}
	})
}

// BenchmarkRequestDeadline: what the deadline costs a request that never
// waits on it, against context.WithTimeout.
func BenchmarkRequestDeadline(b *testing.B) {
	parent, cancel := context.WithCancel(b.Context())
	defer cancel()
	b.Run("withDeadline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := withDeadline(parent, time.Now().Add(time.Minute))
			if c.Err() != nil {
				b.Fatal(c.Err())
			}
			c.release()
		}
	})
	b.Run("context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, release := context.WithTimeout(parent, time.Minute)
			if c.Err() != nil {
				b.Fatal(c.Err())
			}
			release()
		}
	})
}
