// Package periodic runs background work on a fixed interval (the
// directory's refresh, the registry's garbage collection, the sweep of
// failed logins).
package periodic

import (
	"context"
	"time"
)

// Run calls work every interval until ctx ends, the first time one
// interval after it starts. A failure goes to onErr (when not nil and ctx
// has not ended) and the loop goes on: the store may be back at the next
// tick.
func Run(ctx context.Context, every time.Duration, work func(context.Context) error, onErr func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := work(ctx); err != nil && onErr != nil && ctx.Err() == nil {
			onErr(err)
		}
	}
}
