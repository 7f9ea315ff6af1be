package tenant

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/store/bolt/bolttest"
)

// TestRateLimiterShare: tokens come back at the rate, up to the burst;
// processes sharing the budget each take their part of both.
func TestRateLimiterShare(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	peers := 1
	l := NewRateLimiter(nil, func() int { return peers }, func() time.Time { return now })
	inst := &Instance{ID: "i1", Domain: "a.test", Settings: Settings{RateLimit: &RateLimit{RequestsPerSecond: 10, Burst: 20}}}
	admitted := func() int {
		n := 0
		for l.Admit(inst) == nil {
			n++
			if n > 1000 {
				t.Fatal("no limit")
			}
		}
		return n
	}
	if n := admitted(); n != 20 {
		t.Errorf("the burst: %d, want 20", n)
	}
	now = now.Add(500 * time.Millisecond)
	if n := admitted(); n != 5 {
		t.Errorf("after 0.5 s at 10/s: %d, want 5", n)
	}
	now = now.Add(time.Hour)
	if n := admitted(); n != 20 {
		t.Errorf("after an hour: %d, want the burst (20)", n)
	}
	// Four processes: a quarter each; the spent bucket stays spent.
	peers = 4
	if n := admitted(); n != 0 {
		t.Errorf("one of four processes, right after the burst was spent: %d, want 0", n)
	}
	now = now.Add(time.Hour)
	if n := admitted(); n != 5 {
		t.Errorf("one of four processes, the burst: %d, want 5", n)
	}
	now = now.Add(time.Second)
	if n := admitted(); n != 2 {
		t.Errorf("one of four processes after 1 s: %d, want 2 (2.5 per second)", n)
	}
	err := l.Admit(inst)
	if err == nil || err.Error() != "instance a.test is over its rate limit of 10 requests per second (burst 20): retry after 1 s" {
		t.Errorf("refusal: %v", err)
	}
	// No limit anywhere: no bucket.
	free := &Instance{ID: "i2", Domain: "b.test"}
	for range 100 {
		if err := l.Admit(free); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.buckets) != 1 {
		t.Errorf("%d buckets, want 1", len(l.buckets))
	}
	l.Forget("i1")
	if len(l.buckets) != 0 {
		t.Errorf("after forget: %d buckets", len(l.buckets))
	}
}

// TestAddressBuckets: callers without a valid token take from a bucket
// per instance and client address (an IPv6 client's /64), of the
// instance's rate and burst divided among the processes; the buckets
// kept are bounded, the least recently used dropped first, and a deleted
// instance's go with it.
func TestAddressBuckets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	peers := 1
	l := NewRateLimiter(nil, func() int { return peers }, func() time.Time { return now })
	inst := &Instance{ID: "i1", Domain: "a.test", Settings: Settings{RateLimit: &RateLimit{RequestsPerSecond: 1, Burst: 4}}}
	admitted := func(ip string) int {
		n := 0
		for l.AdmitAddress(inst, ip) == nil {
			n++
			if n > 1000 {
				t.Fatal("no limit")
			}
		}
		return n
	}
	if n := admitted("192.0.2.1"); n != 4 {
		t.Errorf("an address's burst: %d, want 4", n)
	}
	if n := admitted("192.0.2.2"); n != 4 {
		t.Errorf("another address's burst: %d, want 4", n)
	}
	if err := l.Admit(inst); err != nil {
		t.Errorf("the instance's bucket after two addresses spent theirs: %v", err)
	}
	if n := admitted("::ffff:192.0.2.1"); n != 0 {
		t.Errorf("an IPv4-mapped address counts as the IPv4 one: %d admitted, want 0", n)
	}
	if n := admitted("2001:db8:1:2::1"); n != 4 {
		t.Errorf("an IPv6 address: %d, want 4", n)
	}
	if n := admitted("2001:db8:1:2:ffff::9"); n != 0 {
		t.Errorf("another address of the same /64: %d, want 0", n)
	}
	if n := admitted("2001:db8:1:3::1"); n != 4 {
		t.Errorf("another /64: %d, want 4", n)
	}
	err := l.AdmitAddress(inst, "2001:db8:1:2::7")
	if err == nil || !strings.Contains(err.Error(), "too many requests without a valid token from 2001:db8:1:2::/64 to instance a.test") ||
		!strings.HasSuffix(err.Error(), "retry after 1 s") {
		t.Errorf("refusal: %v", err)
	}
	// Two processes: half each, the spent bucket stays spent.
	peers = 2
	now = now.Add(time.Hour)
	if n := admitted("192.0.2.1"); n != 2 {
		t.Errorf("one of two processes: %d, want 2", n)
	}
	peers = 1
	// No limit: no bucket.
	free := &Instance{ID: "i2", Domain: "b.test"}
	for range 100 {
		if err := l.AdmitAddress(free, "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	// Bounded: the least recently used go first.
	if n := admitted("192.0.2.1"); n != 0 {
		t.Fatalf("192.0.2.1 is spent: %d", n)
	}
	for i := range maxAddresses {
		_ = l.AdmitAddress(inst, fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255))
	}
	if got := l.addrs.len(); got != maxAddresses {
		t.Errorf("%d address buckets, want at most %d", got, maxAddresses)
	}
	if n := admitted("192.0.2.1"); n != 4 {
		t.Errorf("a dropped address comes back with a full bucket: %d, want 4", n)
	}
	l.Forget("i1")
	if got := l.addrs.len(); got != 0 {
		t.Errorf("after the instance is deleted: %d address buckets", got)
	}
}

// TestWebhookShares: each webhook takes from a bucket of half the
// instance's rate and burst, then from the instance's: a flood on one
// webhook is refused naming the webhook once it has had its half, and
// leaves the other half to the instance's other doors; the instance's
// own bucket refuses naming the instance.
func TestWebhookShares(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewRateLimiter(&RateLimit{RequestsPerSecond: 10, Burst: 10}, nil, func() time.Time { return now })
	inst := &Instance{ID: "i1", Domain: "a.test"}
	admitted := func(hook string) (int, error) {
		for n := 0; ; n++ {
			if err := l.AdmitWebhook(inst, hook); err != nil {
				return n, err
			}
			if n > 1000 {
				t.Fatal("no limit")
			}
		}
	}
	n, err := admitted("flood")
	if n != 5 || err == nil || !strings.Contains(err.Error(), "for webhook flood, which may use half of it: retry after 1 s") {
		t.Errorf("a flood on one webhook: %d admitted, then %v; want 5, then a refusal naming the webhook", n, err)
	}
	if err := l.Admit(inst); err != nil {
		t.Errorf("the instance's other doors after the flood: %v", err)
	}
	n, err = admitted(strings.Repeat("x", 5000))
	if n != 4 || err == nil || err.Error() != "instance a.test is over its rate limit of 10 requests per second (burst 10): retry after 1 s" {
		t.Errorf("another webhook: %d admitted, then %v; want the 4 the instance has left, then its refusal", n, err)
	}
	now = now.Add(time.Hour)
	if n, _ := admitted("flood"); n != 5 {
		t.Errorf("the flooded webhook an hour later: %d, want its half of the burst (5)", n)
	}
	// Unlimited instances keep no webhook buckets.
	free := &Instance{ID: "i2", Domain: "b.test", Settings: Settings{RateLimit: nil}}
	l = NewRateLimiter(nil, nil, func() time.Time { return now })
	for range 100 {
		if err := l.AdmitWebhook(free, "hook"); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.hooks.buckets) != 0 {
		t.Errorf("%d webhook buckets of an unlimited instance, want none", len(l.hooks.buckets))
	}
}

// TestPeers: processes on one store count each other; one that stops
// beating drops out after three intervals and its heartbeat is removed
// after ten.
func TestPeers(t *testing.T) {
	t.Parallel()
	st := bolttest.Open(t)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, b := NewPeers(st, time.Second), NewPeers(st, time.Second)
	a.now, b.now = clock, clock
	if a.Count() != 1 {
		t.Fatalf("before a beat: %d, want 1", a.Count())
	}
	for _, p := range []*Peers{a, b, a} {
		if err := p.Beat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if a.Count() != 2 || b.Count() != 2 {
		t.Errorf("counts %d and %d, want 2 each", a.Count(), b.Count())
	}
	now = now.Add(4 * time.Second) // b stops
	if err := a.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Count() != 1 {
		t.Errorf("after b stopped: %d, want 1", a.Count())
	}
	now = now.Add(10 * time.Second)
	if err := a.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	docs, err := st.ListDocs(ctx, docPeer)
	if err != nil || len(docs) != 1 {
		t.Errorf("heartbeats left: %d %v, want a's only", len(docs), err)
	}
}
