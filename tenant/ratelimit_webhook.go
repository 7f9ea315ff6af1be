package tenant

import (
	"hash/fnv"
	"sync"
	"time"
)

// Per-webhook shares of an instance's rate limit: a webhook is a door
// anyone may knock on, so one webhook's flood must not use up the budget
// of the instance's other doors (its API, its other webhooks). Each
// webhook name of a limited instance has a bucket of its own holding
// half the instance's rate and burst (at least one request), taken before
// the instance's bucket (ratelimit.go): a flood on one webhook takes at
// most half of the instance's budget, past which that webhook alone
// answers 429 RATE_LIMITED. Unknown names get buckets too (the name is
// not looked up before the limit, which would cost a store read per
// request); buckets are keyed by a hash of the name, and at most
// maxWebhookBuckets are kept: past that, full buckets (which hold no
// state) are dropped, and when none is, the new name is limited by the
// instance's bucket alone.

// maxWebhookBuckets bounds the per-webhook buckets of the process.
const maxWebhookBuckets = 10_000

type webhookKey struct {
	inst string
	name uint64 // FNV-1a of the name: a 5 KB name costs no more than a short one
}

type webhookBucket struct {
	limit RateLimit // the instance's limit it was made for
	share int
	tokens
}

// webhookBuckets are the per-webhook buckets. The zero value is ready;
// safe for concurrent use.
type webhookBuckets struct {
	mu      sync.Mutex
	buckets map[webhookKey]*webhookBucket
}

// AdmitWebhook takes a token of webhook name of inst, then one of the
// instance's (Admit), when the instance has a rate limit (its setting,
// else the server's default); or answers RATE_LIMITED naming the webhook,
// or the instance.
func (l *RateLimiter) AdmitWebhook(inst *Instance, name string) error {
	lim := l.limitOf(inst)
	if lim == nil {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	wait, ok := l.hooks.take(webhookKey{inst: inst.ID, name: h.Sum64()}, *lim, max(1, l.share()), l.now())
	if !ok {
		return rateLimited(wait, "instance %s is over its rate limit of %g requests per second (burst %d) for webhook %s, which may use half of it: retry after %d s",
			inst.Domain, lim.RequestsPerSecond, lim.BurstOrRate(), shortName(name), wait)
	}
	return l.Admit(inst)
}

// take takes one token of key's bucket, which holds half of lim divided
// among share processes; when none is left it answers the whole seconds
// until one is back.
func (w *webhookBuckets) take(key webhookKey, lim RateLimit, share int, now time.Time) (wait int, ok bool) {
	rate := lim.RequestsPerSecond / 2 / float64(share)
	burst := max(1, float64(lim.BurstOrRate())/2/float64(share))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buckets == nil {
		w.buckets = map[webhookKey]*webhookBucket{}
	}
	b := w.buckets[key]
	if b == nil || b.limit != lim || b.share != share {
		if b == nil && len(w.buckets) >= maxWebhookBuckets && !w.sweep(now) {
			return 0, true // the instance's bucket still applies
		}
		b = &webhookBucket{limit: lim, share: share, tokens: tokens{rate: rate, burst: burst, n: burst, last: now}}
		w.buckets[key] = b
	}
	return b.spend(now)
}

// sweep drops the buckets that have refilled, and reports whether there
// is room now.
func (w *webhookBuckets) sweep(now time.Time) bool {
	for k, b := range w.buckets {
		if b.n+now.Sub(b.last).Seconds()*b.rate >= b.burst {
			delete(w.buckets, k)
		}
	}
	return len(w.buckets) < maxWebhookBuckets
}

// shortName is a webhook's name as a message quotes it: at most 64 bytes.
func shortName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
