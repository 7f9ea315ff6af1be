package auth

import (
	"context"
	"sync"
	"time"
)

// ThrottleConfig bounds failed logins: at most PerAccount failures per
// account within AccountWindow, and PerClient per client address within
// ClientWindow.
type ThrottleConfig struct {
	PerAccount    int
	AccountWindow time.Duration
	PerClient     int
	ClientWindow  time.Duration
}

// DefaultThrottleConfig returns 10 failures per account per 15 minutes and
// 10 per client address per minute.
func DefaultThrottleConfig() ThrottleConfig {
	return ThrottleConfig{PerAccount: 10, AccountWindow: 15 * time.Minute, PerClient: 10, ClientWindow: time.Minute}
}

// Throttle counts failed logins in fixed windows per key, in memory, and
// where processes share a store (MongoDB), in the store too (Share): a
// login is refused when either count is over its limit, so processes do
// not multiply the allowance. A store that fails leaves the memory count
// in charge.
type Throttle struct {
	cfg    ThrottleConfig
	now    func() time.Time
	shared *SharedFailures

	mu      sync.Mutex
	windows map[string]*window
}

type window struct {
	start    time.Time
	failures int
}

// NewThrottle returns a throttle reading the time from now.
func NewThrottle(cfg ThrottleConfig, now func() time.Time) *Throttle {
	return &Throttle{cfg: cfg, now: now, windows: map[string]*window{}}
}

// Share counts the failures in the store of s as well (call before use).
func (t *Throttle) Share(s *SharedFailures) { t.shared = s }

// Blocked reports whether a login for the account key from the client key
// must be refused now, and for how long.
func (t *Throttle) Blocked(ctx context.Context, account, client string) (bool, time.Duration) {
	blocked, wait := t.blockedHere(account, client)
	if t.shared != nil {
		// A store that fails leaves the memory count in charge.
		for _, d := range [...]time.Duration{
			t.sharedWait(ctx, "a\x00"+account, t.cfg.PerAccount, t.cfg.AccountWindow),
			t.sharedWait(ctx, "c\x00"+client, t.cfg.PerClient, t.cfg.ClientWindow),
		} {
			if d > 0 {
				blocked, wait = true, max(wait, d)
			}
		}
	}
	return blocked, wait
}

// sharedWait is how long the store's count blocks key; 0 when it does
// not or the store fails.
func (t *Throttle) sharedWait(ctx context.Context, key string, limit int, span time.Duration) time.Duration {
	d, err := t.shared.blocked(ctx, key, limit, span)
	if err != nil {
		return 0
	}
	return d
}

// blockedHere is Blocked by this process's counts.
func (t *Throttle) blockedHere(account, client string) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	wait := time.Duration(0)
	check := func(key string, limit int, span time.Duration) {
		w := t.windows[key]
		if w == nil || now.Sub(w.start) >= span {
			return
		}
		if w.failures >= limit {
			if d := w.start.Add(span).Sub(now); d > wait {
				wait = d
			}
		}
	}
	check("a\x00"+account, t.cfg.PerAccount, t.cfg.AccountWindow)
	check("c\x00"+client, t.cfg.PerClient, t.cfg.ClientWindow)
	return wait > 0, wait
}

// Fail records a failed login.
func (t *Throttle) Fail(ctx context.Context, account, client string) {
	if t.shared != nil {
		// A store that fails leaves the memory count in charge.
		_ = t.shared.fail(ctx, "a\x00"+account, t.cfg.PerAccount, t.cfg.AccountWindow)
		_ = t.shared.fail(ctx, "c\x00"+client, t.cfg.PerClient, t.cfg.ClientWindow)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	add := func(key string, span time.Duration) {
		w := t.windows[key]
		if w == nil || now.Sub(w.start) >= span {
			w = &window{start: now}
			t.windows[key] = w
		}
		w.failures++
	}
	add("a\x00"+account, t.cfg.AccountWindow)
	add("c\x00"+client, t.cfg.ClientWindow)
	if len(t.windows) > 100_000 {
		t.sweep(now)
	}
}

// sweep drops ended windows so the map stays bounded.
func (t *Throttle) sweep(now time.Time) {
	longest := max(t.cfg.AccountWindow, t.cfg.ClientWindow)
	for k, w := range t.windows {
		if now.Sub(w.start) >= longest {
			delete(t.windows, k)
		}
	}
}
