package auth

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/store/mongo/mongotest"
)

// TestSharedThrottle: two throttles on one store (two processes, each
// with its own memory) share the counts, on both stores: a pair's limit
// and an account's back-off reached by failures on both processes hold on
// either; an address that never failed for the account is let through on
// both; concurrent failures are all counted; Sweep removes what expired.
func TestSharedThrottle(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(testing.TB) store.Store{
		"bolt":  func(t testing.TB) store.Store { return bolttest.Open(t) },
		"mongo": func(t testing.TB) store.Store { return mongotest.Open(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testSharedThrottle(t, open(t))
		})
	}
}

func testSharedThrottle(t *testing.T, st store.Store) {
	ctx := context.Background()
	c := newClock("2026-01-01T00:00:00Z")
	cfg := DefaultThrottleConfig()
	cfg.PerPair, cfg.AccountThreshold = 3, 6
	a, b := NewThrottle(cfg, c.now), NewThrottle(cfg, c.now)
	a.Share(NewSharedFailures(st, c.now))
	b.Share(NewSharedFailures(st, c.now))

	// A pair's limit: 2 failures on a, 1 on b.
	failN(a, 2, "ada", addr(1))
	wantWait(t, b, "ada from addr 1 after 2 failures on a", "ada", addr(1), 0)
	failN(b, 1, "ada", addr(1))
	wantWait(t, a, "ada from addr 1 after 3 failures on both", "ada", addr(1), 15*time.Minute)

	// hostile checklist 9: the account's back-off from failures spread
	// over addresses and processes; a clean address goes on.
	failN(a, 1, "ada", addr(2))
	failN(b, 1, "ada", addr(3))
	wantWait(t, a, "addr 2 after 5 failures", "ada", addr(2), 0)
	failN(a, 1, "ada", addr(4))
	wantWait(t, b, "addr 2 (failed on a) after 6 failures, on b", "ada", addr(2), time.Minute)
	wantWait(t, a, "addr 3 (failed on b) after 6 failures, on a", "ada", addr(3), time.Minute)
	wantWait(t, b, "a clean address on b", "ada", addr(9), 0)
	wantWait(t, a, "a clean address on a", "ada", addr(9), 0)
	failN(b, 1, "ada", addr(5))
	wantWait(t, a, "addr 2 after the 7th failure (on b)", "ada", addr(2), 2*time.Minute)
	c.add(2 * time.Minute)
	wantWait(t, b, "addr 2 after the back-off", "ada", addr(2), 0)
	if blocked, _ := a.Blocked(ctx, "bob", addr(2)); blocked {
		t.Error("another account is blocked")
	}

	// Concurrent failures on both, 8 for cy from 8 addresses and 3 for
	// dee from one: every one counted.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th := []*Throttle{a, b}[i%2]
			th.Fail(ctx, "cy", addr(20+i))
			if i < 3 {
				th.Fail(ctx, "dee", addr(40))
			}
		}()
	}
	wg.Wait()
	wantWait(t, a, "dee after 3 concurrent failures from one address, on a", "dee", addr(40), 15*time.Minute-2*time.Minute)
	wantWait(t, b, "dee after 3 concurrent failures from one address, on b", "dee", addr(40), 15*time.Minute-2*time.Minute)
	want := cfg.backoff(8)
	for i, th := range []*Throttle{a, b} {
		// Each process's memory holds 4: the store says 8.
		if blocked, wait := th.Blocked(ctx, "cy", addr(20+i)); !blocked || wait != want {
			t.Errorf("cy after 8 concurrent failures, on %s: %v %v, want blocked for %v", []string{"a", "b"}[i], blocked, wait, want)
		}
	}

	docs, err := st.ListDocs(ctx, docLoginFail)
	if err != nil || len(docs) == 0 {
		t.Fatalf("failure documents: %d %v", len(docs), err)
	}
	// An hour on, the state of the previous hour is still needed.
	c.add(time.Hour)
	if err := NewSharedFailures(st, c.now).Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	states := 0
	if docs, err = st.ListDocs(ctx, docLoginFail); err != nil {
		t.Fatal(err)
	}
	for k := range docs {
		if k[len(k)-2:] == ".s" {
			states++
		}
	}
	if states != 3 || len(docs) != 3 {
		t.Errorf("an hour on: %d documents, %d states; want the states of ada, cy and dee only", len(docs), states)
	}
	c.add(time.Hour)
	if err := NewSharedFailures(st, c.now).Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if docs, err := st.ListDocs(ctx, docLoginFail); err != nil || len(docs) != 0 {
		t.Errorf("two hours on: %d documents left (%v), want none", len(docs), err)
	}
}

// TestSharedThrottleRace: the account's state written out of order (the
// race of two processes) does not hide failures: a reader counts on
// through the numbered ones.
func TestSharedThrottleRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := bolttest.Open(t)
	c := newClock("2026-01-01T00:00:00Z")
	cfg := DefaultThrottleConfig()
	cfg.AccountThreshold = 20
	th := NewThrottle(cfg, c.now)
	s := NewSharedFailures(st, c.now)
	th.Share(s)
	for i := range 20 {
		th.Fail(ctx, "ada", addr(i))
	}
	// A late writer puts back the state of the 3rd failure.
	k := keyOf(kindAccount, "ada")
	state := fmt.Appendf(nil, "%d %d 3 0 %d", c.now().Add(2*time.Hour).Unix(), window(c.now(), cfg.AccountWindow), c.now().UnixNano())
	if err := st.PutDoc(ctx, docLoginFail, stateKey(k), state); err != nil {
		t.Fatal(err)
	}
	other := NewThrottle(cfg, c.now) // a process that counted none of them
	other.Share(s)
	wantWait(t, other, "after 20 failures, the state saying 3", "ada", addr(0), time.Minute)
	got, err := s.account(ctx, cfg, k, c.now())
	if err != nil || got.n != 20 {
		t.Errorf("the account's count read: %d %v, want 20", got.n, err)
	}
}
