// Package periodic runs background work on a fixed interval (the
// directory's refresh, the registry's garbage collection, the sweep of
// failed logins).
package periodic

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"
)

// Run calls work every interval until ctx ends, the first time one
// interval after it starts. A failure goes to onErr (when not nil and ctx
// has not ended) and the loop goes on: the store may be back at the next
// tick. A panic in work is a failure too (a *PanicError, with the stack):
// it would otherwise end the whole process, which serves every instance.
func Run(ctx context.Context, every time.Duration, work func(context.Context) error, onErr func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := safely(ctx, work); err != nil && onErr != nil && ctx.Err() == nil {
			onErr(err)
		}
	}
}

// PanicError is a panic recovered from a run of the work.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("periodic: the work panicked: %v", e.Value) }

// safely runs work once, turning a panic into a *PanicError.
func safely(ctx context.Context, work func(context.Context) error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = &PanicError{Value: x, Stack: debug.Stack()}
		}
	}()
	return work(ctx)
}
