package tenant

import (
	"math"
	"sync"
	"time"

	"github.com/corehq/core/errcode"
)

// Per-instance request rates: every request through a door (the engine's
// Open: GraphQL and REST; OpenWebhook: webhooks) by a caller with a valid
// token takes a token from its instance's bucket, before any work for it;
// an empty bucket answers 429 RATE_LIMITED with Retry-After. Callers
// without a valid token take from buckets of their own, per client
// address (ratelimit_address.go); each webhook from a share of its own
// (ratelimit_webhook.go). The limit is the instance's setting
// (Settings.RateLimit), else the server's default (cored serve
// --rate-limit), else none. Buckets live in this process; processes that
// share a store divide the rate and the burst by their number (the share
// function: Peers.Count on MongoDB), so that together they allow about
// the instance's rate whatever the balancer's spread. A new or changed
// limit starts its bucket full; a changed number of processes keeps each
// bucket's fill in proportion.

// RateLimiter keeps the token buckets of the limited instances: one per
// instance, one per instance and client address of the callers without a
// valid token, one per webhook. Safe for concurrent use.
type RateLimiter struct {
	def   *RateLimit
	share func() int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	// addrs are the buckets of the callers without a valid token, per
	// instance and client address (ratelimit_address.go).
	addrs addressBuckets
	// hooks are each webhook's share of its instance's limit
	// (ratelimit_webhook.go); they have a lock of their own.
	hooks webhookBuckets
}

// NewRateLimiter returns the limiter of the instances' rates: def is the
// rate of instances that set none (nil: unlimited), share counts the
// processes that divide each limit (nil: this one alone), now is the
// clock (time.Now).
func NewRateLimiter(def *RateLimit, share func() int, now func() time.Time) *RateLimiter {
	if share == nil {
		share = func() int { return 1 }
	}
	return &RateLimiter{def: def, share: share, now: now, buckets: map[string]*bucket{}}
}

// Admit takes one request's token of inst, or answers RATE_LIMITED.
func (l *RateLimiter) Admit(inst *Instance) error {
	lim := l.limitOf(inst)
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
	return rateLimited(wait, "instance %s is over its rate limit of %g requests per second (burst %d): retry after %d s",
		inst.Domain, lim.RequestsPerSecond, lim.BurstOrRate(), wait)
}

// Forget drops a deleted instance's buckets.
func (l *RateLimiter) Forget(id string) {
	l.mu.Lock()
	delete(l.buckets, id)
	l.addrs.forget(id)
	l.mu.Unlock()
}

// limitOf is the limit inst's requests take from: its setting, else the
// server's default; nil: none.
func (l *RateLimiter) limitOf(inst *Instance) *RateLimit {
	if inst.Settings.RateLimit != nil {
		return inst.Settings.RateLimit
	}
	return l.def
}

// rateLimited is the refusal of a request whose bucket is empty: the
// client may retry after wait seconds (extensions.retryAfter, and the
// Retry-After header the doors write from it).
func rateLimited(wait int, format string, args ...any) error {
	err := errcode.New(errcode.RateLimited, format, args...)
	err.Extensions = map[string]any{"retryAfter": wait}
	return err
}

type bucket struct {
	limit RateLimit // what the bucket was made for
	tokens
}

// tokens is a bucket's fill: rate and burst are this process's share of
// its limit, last when it was last filled.
type tokens struct {
	rate, burst, n float64
	last           time.Time
}

// take takes one token of b, which serves lim divided among share
// processes, at now; when none is left it answers the whole seconds until
// one is back. The zero bucket is a new one.
func (b *bucket) take(lim RateLimit, share int, now time.Time) (wait int, ok bool) {
	n := float64(max(1, share))
	rate := lim.RequestsPerSecond / n
	burst := max(1, float64(lim.BurstOrRate())/n)
	switch {
	case b.limit != lim || b.last.IsZero():
		// A new or changed limit starts full.
		*b = bucket{limit: lim, tokens: tokens{rate: rate, burst: burst, n: burst, last: now}}
	case b.rate != rate || b.burst != burst:
		// A changed number of processes keeps the bucket's fill in
		// proportion: joining or leaving processes start no fresh burst.
		b.n = min(burst, b.n*burst/b.burst)
		b.rate, b.burst = rate, burst
	}
	return b.spend(now)
}

// spend fills t for the time since it was last filled, up to its burst,
// and takes one token; when none is left it answers the whole seconds
// until one is back.
func (t *tokens) spend(now time.Time) (wait int, ok bool) {
	t.fill(now)
	if t.n >= 1 {
		t.n--
		return 0, true
	}
	return max(1, int(math.Ceil((1-t.n)/t.rate))), false
}

// fill adds the tokens that came back since t was last filled.
func (t *tokens) fill(now time.Time) {
	if d := now.Sub(t.last); d > 0 {
		t.n = min(t.burst, t.n+d.Seconds()*t.rate)
		t.last = now
	}
}
