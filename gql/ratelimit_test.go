package gql

import (
	"testing"
	"time"

	"github.com/corehq/core/tenant"
)

// TestRateLimiterShare: tokens come back at the rate, up to the burst;
// processes sharing the budget each take their part of both.
func TestRateLimiterShare(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	peers := 1
	l := newRateLimiter(nil, func() int { return peers }, func() time.Time { return now })
	inst := &tenant.Instance{ID: "i1", Domain: "a.test", Settings: tenant.Settings{RateLimit: &tenant.RateLimit{RequestsPerSecond: 10, Burst: 20}}}
	admitted := func() int {
		n := 0
		for l.admit(inst) == nil {
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
	err := l.admit(inst)
	if err == nil || err.Error() != "instance a.test is over its rate limit of 10 requests per second (burst 20): retry after 1 s" {
		t.Errorf("refusal: %v", err)
	}
	// No limit anywhere: no bucket.
	free := &tenant.Instance{ID: "i2", Domain: "b.test"}
	for range 100 {
		if err := l.admit(free); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.buckets) != 1 {
		t.Errorf("%d buckets, want 1", len(l.buckets))
	}
	l.forget("i1")
	if len(l.buckets) != 0 {
		t.Errorf("after forget: %d buckets", len(l.buckets))
	}
}
