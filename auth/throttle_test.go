package auth

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// clock is a test's time, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock(at string) *clock      { t, _ := time.Parse(time.RFC3339, at); return &clock{t} }
func addr(i int) string              { return fmt.Sprintf("203.0.113.%d", i) }
func failN(th *Throttle, n int, acct, ip string) {
	for range n {
		th.Fail(context.Background(), acct, ip)
	}
}

// wantWait checks Blocked's answer for acct from ip.
func wantWait(t *testing.T, th *Throttle, what, acct, ip string, want time.Duration) {
	t.Helper()
	blocked, wait := th.Blocked(context.Background(), acct, ip)
	if blocked != (want > 0) || wait != want {
		t.Errorf("%s: Blocked(%s, %s) = %v, %v; want %v, %v", what, acct, ip, blocked, wait, want > 0, want)
	}
}

// TestThrottleBackoff: the default policy, with an injected clock.
// hostile checklist 9: 101 wrong passwords for one account within an hour,
// spread over addresses, are throttled (the addresses that failed wait),
// and the right password after the back-off goes through; an address that
// never failed for the account is never refused by the account's count.
func TestThrottleBackoff(t *testing.T) {
	t.Parallel()
	c := newClock("2026-01-01T00:00:00Z")
	th := NewThrottle(DefaultThrottleConfig(), c.now)

	// 100 failures from 20 addresses, 5 each: under every per-address
	// bound, at the account's threshold.
	for i := range 20 {
		failN(th, 5, "ada", addr(i))
	}
	wantWait(t, th, "an address that failed, after 100 failures", "ada", addr(0), time.Minute)
	wantWait(t, th, "a clean address, after 100 failures", "ada", addr(200), 0)
	wantWait(t, th, "another account from an address that failed", "bob", addr(0), 0)

	// Each further failure (the 101st, 102nd, … from clean addresses)
	// doubles the back-off, up to 15 minutes; clean addresses stay clean.
	for i, want := range []time.Duration{2, 4, 8, 15, 15} {
		th.Fail(context.Background(), "ada", addr(100+i))
		wantWait(t, th, fmt.Sprintf("failure %d, from the address that made it", 101+i), "ada", addr(100+i), want*time.Minute)
		wantWait(t, th, fmt.Sprintf("failure %d, an earlier address", 101+i), "ada", addr(3), want*time.Minute)
		wantWait(t, th, fmt.Sprintf("failure %d, a clean address", 101+i), "ada", addr(200), 0)
	}
	c.add(14 * time.Minute)
	wantWait(t, th, "14 minutes later", "ada", addr(0), time.Minute)
	c.add(time.Minute)
	wantWait(t, th, "after the back-off (a new pair window too)", "ada", addr(0), 0)

	// The count is the current and the previous hour: it falls back under
	// the threshold only when an hour has passed with fewer failures.
	failN(th, 1, "ada", addr(0))
	wantWait(t, th, "one more failure, in the same hour", "ada", addr(0), 15*time.Minute)
	c.t = time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	failN(th, 1, "ada", addr(0))
	wantWait(t, th, "two hours later: one failure in the count", "ada", addr(0), 0)
}

// TestThrottleHourBoundary: failures on both sides of an hour count
// together (hostile checklist 9: 101 wrong passwords within an hour →
// throttled, wherever the hour begins).
func TestThrottleHourBoundary(t *testing.T) {
	t.Parallel()
	c := newClock("2026-01-01T00:59:00Z")
	th := NewThrottle(DefaultThrottleConfig(), c.now)
	for i := range 12 {
		failN(th, 5, "ada", addr(i))
	}
	c.add(2 * time.Minute)
	for i := 12; i < 20; i++ {
		failN(th, 5, "ada", addr(i))
	}
	wantWait(t, th, "60 failures at 00:59 and 40 at 01:01", "ada", addr(12), time.Minute)
	wantWait(t, th, "a clean address", "ada", addr(99), 0)
}

// TestThrottleAddress: one address's own bounds, which apply whatever the
// account's state.
func TestThrottleAddress(t *testing.T) {
	t.Parallel()
	c := newClock("2026-01-01T00:00:00Z")
	th := NewThrottle(DefaultThrottleConfig(), c.now)

	// 10 failures per address and account per 15 minutes (spaced, so
	// that the per-address bound does not speak first).
	for range 10 {
		wantWait(t, th, "before 10 failures", "ada", addr(1), 0)
		th.Fail(context.Background(), "ada", addr(1))
		c.add(61 * time.Second)
	}
	// 10m10s into the window.
	wantWait(t, th, "10 failures for ada", "ada", addr(1), 4*time.Minute+50*time.Second)
	wantWait(t, th, "another account from the address", "bob", addr(1), 0)
	wantWait(t, th, "ada from another address", "ada", addr(2), 0)
	c.add(4*time.Minute + 50*time.Second)
	wantWait(t, th, "in the next window", "ada", addr(1), 0)

	// 10 failures per address per minute, whatever the accounts.
	c.t = time.Date(2026, 1, 1, 1, 0, 15, 0, time.UTC)
	for i := range 10 {
		th.Fail(context.Background(), fmt.Sprintf("user%d", i), addr(3))
	}
	wantWait(t, th, "10 failures on 10 accounts", "someone", addr(3), 45*time.Second)
	wantWait(t, th, "another address", "someone", addr(4), 0)

	// IPv6: a /64 is one address.
	for _, tc := range []struct{ in, want string }{
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
		{"::ffff:192.0.2.1", "::ffff:192.0.2.1"},
		{"192.0.2.1", "192.0.2.1"},
		{"not an address", "not an address"},
	} {
		if got := ClientAddress(tc.in); got != tc.want {
			t.Errorf("ClientAddress(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestThrottleBound: addresses and names rotated by the thousand do not
// grow the counters past MaxCounters of each kind, and the flood forgets
// its own one-failure counters, not an account under attack.
func TestThrottleBound(t *testing.T) {
	t.Parallel()
	c := newClock("2026-01-01T00:00:00Z")
	cfg := DefaultThrottleConfig()
	cfg.MaxCounters = 200
	th := NewThrottle(cfg, c.now)
	for i := range 25 {
		failN(th, 4, "ada", addr(i))
	}
	wantWait(t, th, "ada after 100 failures", "ada", addr(0), time.Minute)
	for i := range 20_000 {
		th.Fail(context.Background(), fmt.Sprintf("name%d", i), fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255))
	}
	clients, pairs, accounts := th.counters()
	if clients > cfg.MaxCounters || pairs > cfg.MaxCounters || accounts > cfg.MaxCounters {
		t.Errorf("after 20,000 rotated failures: %d, %d, %d counters; want at most %d of each", clients, pairs, accounts, cfg.MaxCounters)
	}
	th.mu.Lock()
	n, _ := th.accounts.count(keyOf(kindAccount, "ada"), c.now())
	th.mu.Unlock()
	if n != 100 {
		t.Errorf("ada's count after the flood: %d, want 100", n)
	}
}

// TestThrottleInFlight: logins sent at once from one address do not all
// pass the check before the first has failed: one in flight counts as a
// failure of its address until it is done, and an attempt held back only
// by attempts in flight waits for one to be done, then is checked again.
func TestThrottleInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClock("2026-01-01T00:00:00Z")
	th := NewThrottle(DefaultThrottleConfig(), c.now)
	for i := range 20 {
		failN(th, 5, "ada", addr(i))
	}
	// During the back-off, a clean address has one guess at a time.
	done, wait := th.Begin(ctx, "ada", addr(200))
	if wait != 0 {
		t.Fatalf("a clean address during the back-off: wait %v", wait)
	}
	second := beginAsync(ctx, th, "ada", addr(200))
	waitForWaiter(t, th)
	done(ctx, false) // the right password: not a failure
	r := <-second
	if r.wait != 0 {
		t.Fatalf("the second attempt, after the first was done without failing: wait %v, want 0", r.wait)
	}
	third := beginAsync(ctx, th, "ada", addr(200))
	waitForWaiter(t, th)
	r.done(ctx, true) // a wrong password: the third is refused by it
	if r := <-third; r.wait != 2*time.Minute {
		t.Errorf("an attempt waiting on a guess that failed: wait %v, want the back-off's 2 minutes", r.wait)
	}
	wantWait(t, th, "after its failure", "ada", addr(200), 2*time.Minute)
	if n, _ := th.pairs.count(keyOf(kindPair, "ada", addr(200)), c.now()); n != 1 || len(th.inFlight) != 0 {
		t.Errorf("after all were done: %d failures, %d keys in flight; want 1, 0", n, len(th.inFlight))
	}

	// A waiting attempt whose request ends is refused.
	var dones []func(context.Context, bool)
	for i := range 10 {
		d, wait := th.Begin(ctx, "bob", addr(50))
		if wait != 0 {
			t.Fatalf("attempt %d in flight: wait %v", i+1, wait)
		}
		dones = append(dones, d)
	}
	ended, cancel := context.WithCancel(ctx)
	eleventh := beginAsync(ended, th, "bob", addr(50))
	waitForWaiter(t, th)
	cancel()
	if r := <-eleventh; r.wait == 0 {
		t.Error("an 11th attempt with 10 in flight went ahead when its request ended")
	}
	for _, d := range dones {
		d(ctx, false)
	}
	wantWait(t, th, "after the 10 were done without failing", "bob", addr(50), 0)
}

// TestThrottleConcurrentLogins: 40 logins at once from one address. With
// the right password all go through, never more than the address's limit
// in flight; as guesses, the limit's worth are tried and the rest refused.
func TestThrottleConcurrentLogins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := DefaultThrottleConfig()
	for _, guess := range []bool{false, true} {
		th := NewThrottle(cfg, newClock("2026-01-01T00:00:00Z").now)
		var mu sync.Mutex
		inFlight, most, admitted, refused := 0, 0, 0, 0
		var wg sync.WaitGroup
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				done, wait := th.Begin(ctx, "ada", addr(7))
				mu.Lock()
				if wait > 0 {
					refused++
					mu.Unlock()
					return
				}
				admitted++
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
				inFlight--
				mu.Unlock()
				done(ctx, guess)
			}()
		}
		wg.Wait()
		switch {
		case !guess && (admitted != 40 || most > cfg.PerClient):
			t.Errorf("right passwords: %d of 40 went through, at most %d in flight; want 40, at most %d", admitted, most, cfg.PerClient)
		case guess && (admitted != cfg.PerClient || refused != 40-cfg.PerClient):
			t.Errorf("guesses: %d tried, %d refused; want %d, %d", admitted, refused, cfg.PerClient, 40-cfg.PerClient)
		}
	}
}

type begun struct {
	done func(context.Context, bool)
	wait time.Duration
}

// beginAsync runs Begin in a goroutine and hands its answer over.
func beginAsync(ctx context.Context, th *Throttle, acct, ip string) <-chan begun {
	ch := make(chan begun, 1)
	go func() {
		d, w := th.Begin(ctx, acct, ip)
		ch <- begun{d, w}
	}()
	return ch
}

// waitForWaiter returns once an attempt waits in Begin for one in flight
// (it holds the channel that the next landing closes).
func waitForWaiter(t *testing.T, th *Throttle) {
	t.Helper()
	for th.waiting.Load() == 0 {
		runtime.Gosched()
	}
}

// TestThrottleWaitsInOrder: attempts held back by attempts in flight go
// ahead in the order they came, one for each that is done, and one that
// comes later does not overtake them.
func TestThrottleWaitsInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	th := NewThrottle(DefaultThrottleConfig(), newClock("2026-01-01T00:00:00Z").now)
	var dones []func(context.Context, bool)
	for range 10 {
		d, wait := th.Begin(ctx, "ada", addr(9))
		if wait != 0 {
			t.Fatalf("attempt in flight: wait %v", wait)
		}
		dones = append(dones, d)
	}
	var waiters []<-chan begun
	for i := range 5 {
		waiters = append(waiters, beginAsync(ctx, th, "ada", addr(9)))
		for th.waiting.Load() != int32(i+1) {
			runtime.Gosched()
		}
	}
	for i, w := range waiters {
		dones[i](ctx, false)
		r := <-w
		if r.wait != 0 {
			t.Fatalf("waiter %d: wait %v", i, r.wait)
		}
		for j, later := range waiters[i+1:] {
			select {
			case r := <-later:
				t.Fatalf("waiter %d went ahead before waiter %d (wait %v)", i+j+1, i, r.wait)
			default:
			}
		}
		dones = append(dones, r.done)
	}
	for _, d := range dones[len(waiters):] {
		d(ctx, false)
	}
	if len(th.inFlight) != 0 || len(th.queues) != 0 {
		t.Errorf("after all were done: %d keys in flight, %d queues", len(th.inFlight), len(th.queues))
	}
}
