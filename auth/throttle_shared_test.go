package auth

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/store/bolt/bolttest"
)

// TestSharedThrottle: two throttles on one store (two processes) share
// the counts: failures on either add up, concurrent ones are all
// counted, a window's end frees the key, and Sweep removes ended windows.
func TestSharedThrottle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := bolttest.Open(t)
	now := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	cfg := ThrottleConfig{PerAccount: 4, AccountWindow: time.Minute, PerClient: 100, ClientWindow: time.Minute}
	a, b := NewThrottle(cfg, clock), NewThrottle(cfg, clock)
	a.Share(NewSharedFailures(st, clock))
	b.Share(NewSharedFailures(st, clock))
	a.Fail(ctx, "ada", "ip1")
	b.Fail(ctx, "ada", "ip2")
	a.Fail(ctx, "ada", "ip3")
	if blocked, _ := b.Blocked(ctx, "ada", "ip4"); blocked {
		t.Fatal("blocked after 3 failures of 4")
	}
	b.Fail(ctx, "ada", "ip5")
	for _, th := range []*Throttle{a, b} {
		if blocked, wait := th.Blocked(ctx, "ada", "ip6"); !blocked || wait != 30*time.Second {
			t.Errorf("after 4 failures on two processes: %v %v, want blocked for the window's last 30 s", blocked, wait)
		}
	}
	if blocked, _ := a.Blocked(ctx, "bob", "ip6"); blocked {
		t.Error("another account is blocked")
	}
	now = now.Add(30 * time.Second)
	if blocked, _ := b.Blocked(ctx, "ada", "ip6"); blocked {
		t.Error("still blocked in the next window")
	}

	// Concurrent failures on both: every one counted, up to the limit.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			[]*Throttle{a, b}[i%2].Fail(ctx, "cy", "ip7")
		}()
	}
	wg.Wait()
	if blocked, _ := a.Blocked(ctx, "cy", "ip8"); !blocked {
		t.Error("4 concurrent failures on two processes did not reach the limit of 4")
	}

	docs, err := st.ListDocs(ctx, docLoginFail)
	if err != nil || len(docs) == 0 {
		t.Fatalf("failure documents: %d %v", len(docs), err)
	}
	now = now.Add(2 * time.Minute)
	if err := NewSharedFailures(st, clock).Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if docs, err := st.ListDocs(ctx, docLoginFail); err != nil || len(docs) != 0 {
		t.Errorf("after the sweep: %d documents left (%v), want none", len(docs), err)
	}
}
