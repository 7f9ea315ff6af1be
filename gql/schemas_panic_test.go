package gql

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/tenant"
)

// TestSchemaBuildPanicIsRecovered: a panic while a release's schema is
// built becomes an error for the caller that built it and for every
// caller waiting on the same build (none hangs, none panics), nothing is
// cached, and the next request builds again.
//
// hostile checklist 45: a panic inside the schema compiler → recovered
// (500 for that request), the process keeps serving.
func TestSchemaBuildPanicIsRecovered(t *testing.T) {
	t.Parallel()
	reg := tenant.NewDirectory(bolttest.Open(t))
	rel, _, err := reg.PutRelease(context.Background(), "bookstore", "v1", "", schemasSDL)
	if err != nil {
		t.Fatal(err)
	}
	var panicking atomic.Bool
	panicking.Store(true)
	entered, gate := make(chan struct{}), make(chan struct{})
	var builds atomic.Int32
	c := newSchemas(func(m *schema.Model) (*Schema, error) {
		if builds.Add(1) == 1 {
			entered <- struct{}{}
			<-gate
		}
		if panicking.Load() {
			panic("kaboom in the compiler")
		}
		return &Schema{model: m}, nil
	}, reg.Holds)

	const callers = 8
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := c.get(rel)
		errs <- err
	}()
	<-entered // the first build runs; the others wait on it
	for range callers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.get(rel)
			errs <- err
		}()
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil {
			t.Error("a caller got a schema from a build that panicked")
		} else if !strings.Contains(err.Error(), "panic while building the schema: kaboom in the compiler") && err != errUnfinished {
			t.Errorf("a caller got %v", err)
		}
	}
	panicking.Store(false)
	s, err := c.get(rel)
	if err != nil || s == nil {
		t.Errorf("the next build: %v", err)
	}
}
