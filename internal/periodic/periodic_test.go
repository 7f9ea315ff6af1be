package periodic

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPanicIsRecovered: a run of the work that panics is reported to
// onErr as a *PanicError carrying the value and the stack, and the loop
// goes on to the next run.
//
// hostile checklist 45: a panic inside a background worker → recovered
// and logged; the process keeps running.
func TestPanicIsRecovered(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runs atomic.Int32
	again := make(chan struct{})
	reported := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, time.Millisecond, func(context.Context) error {
			if runs.Add(1) == 1 {
				panic("kaboom in the background")
			}
			select {
			case again <- struct{}{}:
			default:
			}
			return nil
		}, func(err error) {
			select {
			case reported <- err:
			default:
			}
		})
	}()
	err := <-reported
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "kaboom in the background" || !strings.Contains(string(pe.Stack), "periodic.TestPanicIsRecovered") {
		t.Errorf("reported %v, want a *PanicError with the value and a stack naming the work", err)
	}
	<-again // the loop went on after the panic
	cancel()
	<-done
}
