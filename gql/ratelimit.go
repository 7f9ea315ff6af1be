package gql

import (
	"math"
	"sync"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/tenant"
)

// Per-instance request rates: every request through a door (Open: GraphQL
// and REST; OpenWebhook: webhooks) by a caller with a valid token takes a
// token from its instance's bucket, before any work for it; an empty
// bucket answers 429 RATE_LIMITED with Retry-After. Callers without a
// valid token take from buckets of their own, per client address
// (ratelimit_address.go). The limit is the instance's setting
// (tenant.Settings.RateLimit), else the server's default (Config.RateLimit,
// cored serve --rate-limit), else none. Buckets live in this process;
// processes that share a store divide the rate and the burst by their
// number (the share function: tenant.Peers on MongoDB), so that together
// they allow about the instance's rate whatever the balancer's spread. A
// new or changed limit starts its bucket full; a changed number of
// processes keeps each bucket's fill in proportion.

// rateLimiter keeps one token bucket per limited instance. Safe for
// concurrent use.
type rateLimiter struct {
	def   *tenant.RateLimit
	share func() int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	// addrs are the buckets of the callers without a valid token, per
	// instance and client address (ratelimit_address.go).
	addrs addressBuckets
}

type bucket struct {
	limit               tenant.RateLimit // what the bucket was made for
	rate, burst, tokens float64          // this process's share of it
	last                time.Time
}

func newRateLimiter(def *tenant.RateLimit, share func() int, now func() time.Time) *rateLimiter {
	if share == nil {
		share = func() int { return 1 }
	}
	return &rateLimiter{def: def, share: share, now: now, buckets: map[string]*bucket{}}
}

// admit takes one request's token of inst, or answers RATE_LIMITED.
func (l *rateLimiter) admit(inst *tenant.Instance) error {
	lim := inst.Settings.RateLimit
	if lim == nil {
		lim = l.def
	}
	if lim == nil {
		return nil
	}
	share, now := l.share(), l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[inst.ID]
	if b == nil {
		b = &bucket{}
		l.buckets[inst.ID] = b
	}
	wait, ok := b.take(*lim, share, now)
	if ok {
		return nil
	}
	err := errcode.New(errcode.RateLimited, "instance %s is over its rate limit of %g requests per second (burst %d): retry after %d s",
		inst.Domain, lim.RequestsPerSecond, lim.BurstOrRate(), wait)
	err.Extensions = map[string]any{"retryAfter": wait}
	return err
}

// take takes one token of b, which serves lim divided among share
// processes, at now; when none is left it answers the whole seconds until
// one is back. The zero bucket is a new one.
func (b *bucket) take(lim tenant.RateLimit, share int, now time.Time) (wait int, ok bool) {
	n := float64(max(1, share))
	rate := lim.RequestsPerSecond / n
	burst := max(1, float64(lim.BurstOrRate())/n)
	switch {
	case b.limit != lim || b.last.IsZero():
		// A new or changed limit starts full.
		*b = bucket{limit: lim, rate: rate, burst: burst, tokens: burst, last: now}
	case b.rate != rate || b.burst != burst:
		// A changed number of processes keeps the bucket's fill in
		// proportion: joining or leaving processes start no fresh burst.
		b.tokens = min(burst, b.tokens*burst/b.burst)
		b.rate, b.burst = rate, burst
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return max(1, int(math.Ceil((1-b.tokens)/b.rate))), false
}

// forget drops a deleted instance's buckets.
func (l *rateLimiter) forget(id string) {
	l.mu.Lock()
	delete(l.buckets, id)
	l.addrs.forget(id)
	l.mu.Unlock()
}
