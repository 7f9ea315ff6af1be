package auth

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Failed logins are counted three ways, and an attempt is refused (429
// with Retry-After, before its password is read) when:
//
//  1. its client address has PerClient failures (for any account) in the
//     current ClientWindow, until that window ends; or
//  2. its address has PerPair failures for this account in the current
//     PairWindow, until that window ends; or
//  3. its address has failed for this account at least once in the
//     current PairWindow, and the account is backing off: it has
//     AccountThreshold failures or more in the current and previous
//     AccountWindow (so at least those of the last AccountWindow), from
//     any addresses, and its latest failure was less than
//     AccountDelay·2^(failures−AccountThreshold) ago (at most
//     AccountMaxDelay), until that time has passed.
//
// An address that has not failed for the account is subject to 1 only:
// the account-wide count never refuses it, so a stranger cannot keep the
// owner out by failing on purpose, from any number of addresses. Its
// wrong passwords count like any other, and make it subject to 3. The
// account's count slows a distributed attack instead: each address gets
// one guess, and then one per PairWindow or per back-off, whichever ends
// first (see docs/login-throttling.md for the numbers). A login in flight
// (Begin, not yet done) counts as a failure of its address meanwhile, so
// that one address's parallel guesses do not all pass before the first
// fails.
//
// Windows are fixed and aligned to the clock (the time truncated to the
// window's span), in memory and in the store alike, so that processes
// sharing a store agree on them. Keys are hashed (16 bytes of SHA-256):
// an account name or an address of any length costs the same.

// ThrottleConfig bounds failed logins (see above).
type ThrottleConfig struct {
	// PerClient failures from one client address (any account) within
	// ClientWindow refuse that address.
	PerClient    int
	ClientWindow time.Duration
	// PerPair failures from one address for one account within
	// PairWindow refuse that address for that account; one failure makes
	// it subject to the account's back-off.
	PerPair    int
	PairWindow time.Duration
	// AccountThreshold failures of one account within the current and
	// previous AccountWindow start its back-off: AccountDelay after the
	// latest failure, doubling with each further one, at most
	// AccountMaxDelay.
	AccountThreshold int
	AccountWindow    time.Duration
	AccountDelay     time.Duration
	AccountMaxDelay  time.Duration
	// MaxCounters bounds the counters kept in memory of each kind
	// (addresses, address–account pairs, accounts); a full set forgets
	// the counter with the fewest live failures among a few.
	MaxCounters int
}

// DefaultThrottleConfig returns 10 failures per address per minute, 10
// per address and account per 15 minutes, and a back-off from 100
// failures of an account per hour: 1 minute, doubling, at most 15
// minutes; 50,000 counters of each kind in memory.
func DefaultThrottleConfig() ThrottleConfig {
	return ThrottleConfig{
		PerClient: 10, ClientWindow: time.Minute,
		PerPair: 10, PairWindow: 15 * time.Minute,
		AccountThreshold: 100, AccountWindow: time.Hour,
		AccountDelay: time.Minute, AccountMaxDelay: 15 * time.Minute,
		MaxCounters: 50_000,
	}
}

// backoff is how long after its latest failure an account with n
// failures (n ≥ AccountThreshold) backs off.
func (c ThrottleConfig) backoff(n int) time.Duration {
	d := c.AccountDelay
	for i := c.AccountThreshold; i < n && d < c.AccountMaxDelay; i++ {
		d *= 2
	}
	return min(d, c.AccountMaxDelay)
}

// backoffSteps is how many failures past the threshold bring the
// back-off to its maximum: counting further ones changes nothing.
func (c ThrottleConfig) backoffSteps() int {
	n := 0
	for d := c.AccountDelay; d > 0 && d < c.AccountMaxDelay; d *= 2 {
		n++
	}
	return n
}

// tally is what the policy reads of an attempt's counters.
type tally struct {
	client  int       // the address's failures in the current ClientWindow
	pair    int       // the address's failures for the account in the current PairWindow
	account int       // the account's failures in the current and previous AccountWindow
	last    time.Time // the account's latest failure
}

// or is the larger of each of t's and u's counts: memory and store
// each know at least what they counted.
func (t tally) or(u tally) tally {
	t.client, t.pair, t.account = max(t.client, u.client), max(t.pair, u.pair), max(t.account, u.account)
	if u.last.After(t.last) {
		t.last = u.last
	}
	return t
}

// wait is how long an attempt with tally s must wait at now; 0 lets it
// through. The order of the rules is the package comment's.
func (c ThrottleConfig) wait(now time.Time, s tally) time.Duration {
	var d time.Duration
	if s.client >= c.PerClient {
		d = max(d, windowEnd(now, c.ClientWindow).Sub(now))
	}
	if s.pair >= c.PerPair {
		d = max(d, windowEnd(now, c.PairWindow).Sub(now))
	}
	if s.pair > 0 {
		d = max(d, c.backingOff(now, s.account, s.last))
	}
	return d
}

// backingOff is how long an account with n failures, the latest at last,
// still backs off at now; 0 when it does not.
func (c ThrottleConfig) backingOff(now time.Time, n int, last time.Time) time.Duration {
	if n < c.AccountThreshold {
		return 0
	}
	return max(0, last.Add(c.backoff(n)).Sub(now))
}

// window is the index of the window of span that holds now.
func window(now time.Time, span time.Duration) int64 { return now.UnixNano() / int64(span) }

// windowEnd is when the window of span that holds now ends.
func windowEnd(now time.Time, span time.Duration) time.Time {
	return time.Unix(0, (window(now, span)+1)*int64(span))
}

// key names one counter: 16 bytes of the SHA-256 of its kind and parts.
type key [16]byte

// Kinds of counters.
const (
	kindClient  = 'c'
	kindPair    = 'p'
	kindAccount = 'a'
)

func keyOf(kind byte, parts ...string) key {
	h := sha256.New()
	h.Write([]byte{kind})
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var k key
	copy(k[:], h.Sum(nil))
	return k
}

// attempt holds the keys of one login attempt's counters.
type attempt struct{ client, pair, account key }

func attemptOf(account, client string) attempt {
	return attempt{client: keyOf(kindClient, client), pair: keyOf(kindPair, account, client), account: keyOf(kindAccount, account)}
}

// ClientAddress is the address a client's failures count against: an
// IPv6 address's /64 prefix (one host usually holds a whole /64, and
// could otherwise fail from 2^64 fresh addresses), any other address as
// it is.
func ClientAddress(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Unmap().Is6() {
		return ip
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// counter counts one key's failures in fixed windows.
type counter struct {
	win  int64 // the window of n
	n    int32 // failures in window win
	prev int32 // failures in window win-1 (accounts)
	last int64 // the latest failure, Unix nanoseconds (accounts)
}

// live is c's failures in window w, plus those of w-1 when withPrev.
func (c counter) live(w int64, withPrev bool) int {
	switch {
	case c.win == w && withPrev:
		return int(c.n + c.prev)
	case c.win == w:
		return int(c.n)
	case c.win == w-1 && withPrev:
		return int(c.n)
	}
	return 0
}

// counterSet is the counters of one kind in memory, at most max of
// them. Bounded by number, not by time: an attacker rotating addresses
// or names makes the set forget its own one-failure counters first (a
// full set drops the counter with the fewest live failures of a sample
// of evictSample), while a counter with many failures — an account
// under attack, an address guessing — survives far longer.
type counterSet struct {
	span     time.Duration
	withPrev bool
	max      int
	m        map[key]counter
}

// evictSample is how many counters a full set looks at to drop one.
const evictSample = 8

func newCounterSet(span time.Duration, withPrev bool, max int) counterSet {
	return counterSet{span: span, withPrev: withPrev, max: max, m: map[key]counter{}}
}

// count returns k's live failures at now and its latest failure.
func (s *counterSet) count(k key, now time.Time) (int, time.Time) {
	c, ok := s.m[k]
	if !ok {
		return 0, time.Time{}
	}
	return c.live(window(now, s.span), s.withPrev), time.Unix(0, c.last)
}

// add counts one failure of k at now and returns how many k had in
// the current window before it.
func (s *counterSet) add(k key, now time.Time) int {
	w := window(now, s.span)
	c, ok := s.m[k]
	if !ok && len(s.m) >= max(1, s.max) {
		s.evict(w)
	}
	before := 0
	switch {
	case c.win == w:
		before = int(c.n)
	case c.win == w-1:
		c.win, c.prev, c.n = w, c.n, 0
	default:
		c.win, c.prev, c.n = w, 0, 0
	}
	c.n++
	c.last = now.UnixNano()
	s.m[k] = c
	return before
}

// evict drops the counter with the fewest live failures (the oldest
// among equals) of a sample; map iteration starts at a random place.
func (s *counterSet) evict(w int64) {
	var victim key
	best, bestWin, i := -1, int64(0), 0
	for k, c := range s.m {
		n := c.live(w, s.withPrev)
		if best < 0 || n < best || n == best && c.win < bestWin {
			victim, best, bestWin = k, n, c.win
		}
		if i++; i == evictSample {
			break
		}
	}
	delete(s.m, victim)
}

// Throttle counts failed logins per client address, per address and
// account, and per account (see the rules above), in memory, and where
// processes share a store (MongoDB) in the store too (Share): each rule
// reads the larger of the two counts, so processes do not multiply the
// allowance, and a store that fails leaves the memory counts in charge.
// Safe for concurrent use.
//
// Checking and counting are two steps (Blocked before the password is
// verified, Fail after): attempts that are checked at once, before any
// of them failed, all go through. The hashing slots (Accounts.acquire)
// bound how many verify at once.
type Throttle struct {
	cfg    ThrottleConfig
	now    func() time.Time
	shared *SharedFailures

	mu                       sync.Mutex
	clients, pairs, accounts counterSet
	// inFlight counts the attempts (Begin) not yet done, per address and
	// per pair: each counts as a failure until it is done, so that
	// attempts sent at once from one address cannot all pass the check
	// before the first has failed. As many as there are logins running.
	inFlight map[key]int
	// queues holds, per address, the attempts waiting in Begin for one in
	// flight, first come first: only the first of them is woken (its
	// turn), by an attempt of the address that is done or by the one
	// before it that went ahead, was refused or gave up.
	queues map[key][]chan struct{}
	// waiting counts the attempts waiting in Begin (for tests).
	waiting atomic.Int32
}

// NewThrottle returns a throttle reading the time from now.
func NewThrottle(cfg ThrottleConfig, now func() time.Time) *Throttle {
	return &Throttle{cfg: cfg, now: now,
		clients:  newCounterSet(cfg.ClientWindow, false, cfg.MaxCounters),
		pairs:    newCounterSet(cfg.PairWindow, false, cfg.MaxCounters),
		accounts: newCounterSet(cfg.AccountWindow, true, cfg.MaxCounters),
		inFlight: map[key]int{},
		queues:   map[key][]chan struct{}{},
	}
}

// Share counts the failures in the store of s as well (call before use).
func (t *Throttle) Share(s *SharedFailures) { t.shared = s }

// Blocked reports whether a login for the account key from the client key
// must be refused now, and for how long. account names the account as
// the client named it (whether or not it exists, so that the answer
// tells nothing of that); client is its address (ClientAddress), both
// qualified by the instance. It reads the failures only: an attempt that
// attempts in flight hold back waits in Begin rather than being refused.
func (t *Throttle) Blocked(ctx context.Context, account, client string) (bool, time.Duration) {
	a := attemptOf(account, client)
	now := t.now()
	t.mu.Lock()
	s := t.local(a, now)
	t.mu.Unlock()
	wait := t.check(ctx, a, now, s)
	return wait > 0, wait
}

// Begin is Blocked for a login that goes ahead unless it is refused
// (wait > 0). One that goes ahead is in flight until done: until then it
// counts as a failure of its address, for the account and for any, in
// this process. done records the failure (Fail) when failed, and must be
// called once.
//
// An attempt that would be refused only because of attempts still in
// flight (its address has not failed enough itself) waits for one of them
// to be done and is checked again: logins with the right password sent at
// once from one address (an office behind one address, a back end logging
// its users in) all go through, a few at a time, while guesses sent at once
// are refused as soon as the first ones have failed. The wait ends with
// ctx (the request's deadline), as a refusal.
func (t *Throttle) Begin(ctx context.Context, account, client string) (done func(ctx context.Context, failed bool), wait time.Duration) {
	a := attemptOf(account, client)
	var turn chan struct{} // this attempt's place in its address's queue, once it waits
	refused := func() (func(context.Context, bool), time.Duration) { return func(context.Context, bool) {}, wait }
	for {
		now := t.now()
		t.mu.Lock()
		failures := t.local(a, now)
		s := failures
		s.client += t.inFlight[a.client]
		s.pair += t.inFlight[a.pair]
		q := t.queues[a.client]
		first := len(q) == 0 || q[0] == turn
		if wait = t.cfg.wait(now, s); wait == 0 && first {
			// Taken before the lock is let go: of attempts checked at
			// once, the second sees the first.
			t.inFlight[a.client]++
			t.inFlight[a.pair]++
			t.leave(a.client, turn)
			t.mu.Unlock()
			break
		}
		if w := t.cfg.wait(now, failures); w > 0 {
			wait = w // refused by failures
			t.leave(a.client, turn)
			t.mu.Unlock()
			return refused()
		}
		if turn == nil {
			turn = make(chan struct{}, 1)
			t.queues[a.client] = append(q, turn)
		}
		t.mu.Unlock()
		t.waiting.Add(1)
		select {
		case <-turn:
			t.waiting.Add(-1)
		case <-ctx.Done():
			t.waiting.Add(-1)
			t.mu.Lock()
			t.leave(a.client, turn)
			t.mu.Unlock()
			if wait == 0 {
				wait = time.Second
			}
			return refused()
		}
	}
	if wait = t.check(ctx, a, t.now(), t.tallyInFlight(a)); wait > 0 {
		t.land(a)
		return refused()
	}
	return func(ctx context.Context, failed bool) {
		if failed {
			t.Fail(ctx, account, client)
		}
		t.land(a)
	}, 0
}

// leave takes turn (nil: an attempt that never waited) out of the queue
// of address k and wakes the queue's first, which may now go ahead (t.mu
// held).
func (t *Throttle) leave(k key, turn chan struct{}) {
	q := t.queues[k]
	if turn != nil {
		for i, c := range q {
			if c == turn {
				q = append(q[:i:i], q[i+1:]...)
				break
			}
		}
	}
	if len(q) == 0 {
		delete(t.queues, k)
		return
	}
	t.queues[k] = q
	select {
	case q[0] <- struct{}{}:
	default: // woken already
	}
}

// tallyInFlight is the local tally of a's counters with the attempts in
// flight other than a's own counted as failures (what the store's counts
// are added to).
func (t *Throttle) tallyInFlight(a attempt) tally {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.local(a, t.now())
	s.client += t.inFlight[a.client] - 1
	s.pair += t.inFlight[a.pair] - 1
	return s
}

// land ends an attempt in flight.
func (t *Throttle) land(a attempt) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range [...]key{a.client, a.pair} {
		if t.inFlight[k]--; t.inFlight[k] <= 0 {
			delete(t.inFlight, k)
		}
	}
	t.leave(a.client, nil) // the address's first waiting attempt may go ahead
}

// check is how long an attempt with local tally s waits, the store's
// counts added.
func (t *Throttle) check(ctx context.Context, a attempt, now time.Time, s tally) time.Duration {
	if t.shared != nil {
		// A store that fails leaves the memory count in charge.
		if shared, err := t.shared.tally(ctx, t.cfg, a, now, s); err == nil {
			s = s.or(shared)
		}
	}
	return t.cfg.wait(now, s)
}

// local is the tally of this process's failures (t.mu held).
func (t *Throttle) local(a attempt, now time.Time) tally {
	var s tally
	s.client, _ = t.clients.count(a.client, now)
	s.pair, _ = t.pairs.count(a.pair, now)
	s.account, s.last = t.accounts.count(a.account, now)
	return s
}

// Fail records a failed login (see Blocked for the keys).
func (t *Throttle) Fail(ctx context.Context, account, client string) {
	a := attemptOf(account, client)
	now := t.now()
	t.mu.Lock()
	// This process's failures in each current window: the store holds at
	// least as many, so its numbering can start there.
	var mine tally
	mine.client = t.clients.add(a.client, now)
	mine.pair = t.pairs.add(a.pair, now)
	mine.account = t.accounts.add(a.account, now)
	t.mu.Unlock()
	if t.shared != nil {
		// A store that fails leaves the memory count in charge.
		_ = t.shared.fail(ctx, t.cfg, a, now, mine)
	}
}

// counters returns how many counters of each kind the throttle holds in
// memory (for tests of the bound).
func (t *Throttle) counters() (clients, pairs, accounts int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.clients.m), len(t.pairs.m), len(t.accounts.m)
}
