package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corehq/core/internal/periodic"
	"github.com/corehq/core/store"
)

// SharedFailures keeps the failed-login counts in the store, so that
// processes serving one MongoDB share them: N processes do not multiply
// the allowance by N. Documents of kind "loginfail", keyed by the
// counter's key in hex:
//
//   - <key>.<window>.<n>: the n-th failure (from 0) of the counter's
//     window. A failure creates the first free number with CreateDoc,
//     which only one writer can do, so concurrent failures on several
//     processes each take their own number and none is lost. Numbers run
//     up to the count that matters: PerClient and PerPair (a counter is
//     full when document limit-1 exists: one read), and for accounts
//     AccountThreshold plus the failures that bring the back-off to its
//     maximum.
//   - <key>.s: an account's state, "<expires> <window> <n> <prev>
//     <latest failure>", written after each of its failures by the
//     process that took number n-1, so that a check reads one document,
//     and one numbered failure to see that the count is current: two
//     processes failing at once may write the state in either order, so
//     a reader counts on from its n through the numbered failures.
//
// Every document begins with its expiry (Unix seconds); Sweep removes
// the expired ones. The store holds at most PerClient, PerPair and
// AccountThreshold plus the back-off's steps (105 by default) numbered
// documents per counter and window; how many counters there are follows
// the failures of the last hour (each failure adds at most three
// numbered documents of about 50 bytes, and an account's state).
type SharedFailures struct {
	st  store.Store
	now func() time.Time
}

// docLoginFail is the kind of the failure documents.
const docLoginFail = "loginfail"

// NewSharedFailures keeps counts in st, reading the time from now.
func NewSharedFailures(st store.Store, now func() time.Time) *SharedFailures {
	return &SharedFailures{st: st, now: now}
}

// numbered is the key of the n-th failure of k in window w.
func numbered(k key, w int64, n int) string {
	return hex.EncodeToString(k[:]) + "." + strconv.FormatInt(w, 10) + "." + strconv.Itoa(n)
}

// stateKey is the key of an account's state.
func stateKey(k key) string { return hex.EncodeToString(k[:]) + ".s" }

// tally reads the store's counts of attempt a at now. local is what
// memory knows: reads it makes unnecessary are skipped.
func (s *SharedFailures) tally(ctx context.Context, cfg ThrottleConfig, a attempt, now time.Time, local tally) (tally, error) {
	var out tally
	acct, err := s.account(ctx, cfg, a.account, now)
	if err != nil {
		return tally{}, err
	}
	out.account, out.last = acct.live(window(now, cfg.AccountWindow), true), time.Unix(0, acct.last)
	if local.client < cfg.PerClient {
		full, err := s.exists(ctx, numbered(a.client, window(now, cfg.ClientWindow), cfg.PerClient-1))
		if err != nil {
			return tally{}, err
		}
		if full {
			out.client = cfg.PerClient
		}
	}
	pw := window(now, cfg.PairWindow)
	if local.pair < cfg.PerPair {
		full, err := s.exists(ctx, numbered(a.pair, pw, cfg.PerPair-1))
		if err != nil {
			return tally{}, err
		}
		if full {
			out.pair = cfg.PerPair
		}
	}
	// Whether the address failed for the account matters only while the
	// account backs off.
	if both := out.or(local); both.pair == 0 && cfg.backingOff(now, both.account, both.last) > 0 {
		failed, err := s.exists(ctx, numbered(a.pair, pw, 0))
		if err != nil {
			return tally{}, err
		}
		if failed {
			out.pair = 1
		}
	}
	return out, nil
}

// fail counts one failure of attempt a at now. mine is this process's
// failures in each current window before this one: an address's and a
// pair's numbering starts there (the numbers below are this process's,
// taken or being taken, so none is skipped for good; at most PerClient
// and PerPair tries).
func (s *SharedFailures) fail(ctx context.Context, cfg ThrottleConfig, a attempt, now time.Time, mine tally) error {
	if _, err := s.take(ctx, a.client, now, cfg.ClientWindow, mine.client, cfg.PerClient, windowEnd(now, cfg.ClientWindow)); err != nil {
		return err
	}
	if _, err := s.take(ctx, a.pair, now, cfg.PairWindow, mine.pair, cfg.PerPair, windowEnd(now, cfg.PairWindow)); err != nil {
		return err
	}
	acct, err := s.account(ctx, cfg, a.account, now)
	if err != nil {
		return err
	}
	span := cfg.AccountWindow
	w := window(now, span)
	switch acct.win {
	case w:
	case w - 1:
		acct = counter{win: w, prev: acct.n}
	default:
		acct = counter{win: w}
	}
	end := windowEnd(now, span)
	// Numbering from what the store shows, never from memory: a number
	// taken from the state's count is at most one past the highest taken,
	// so the numbers stay a run from 0 once the failures in flight land,
	// and the count read is their number. (A process's memory can run
	// ahead of the store while its failures are in flight; numbering past
	// the others' state from there would leave gaps that count.)
	n, err := s.take(ctx, a.account, now, span, int(acct.n), accountNumbers(cfg), end)
	if err != nil {
		return err
	}
	if n < 0 {
		// Past the numbered failures: the back-off is at its maximum
		// and the count only has to grow.
		n = int(acct.n)
	}
	acct.n, acct.last = int32(max(n+1, int(acct.n))), now.UnixNano()
	expires := end.Add(span) // the state counts as the previous window until then
	if lock := now.Add(cfg.AccountMaxDelay); lock.After(expires) {
		expires = lock
	}
	doc := fmt.Sprintf("%d %d %d %d %d", expires.Unix(), acct.win, acct.n, acct.prev, acct.last)
	return s.st.PutDoc(ctx, docLoginFail, stateKey(a.account), []byte(doc))
}

// take numbers one failure of k in the window of span holding now,
// trying from the number from (taken already) up to limit, and returns
// the number it took, or -1 when all are taken.
func (s *SharedFailures) take(ctx context.Context, k key, now time.Time, span time.Duration, from, limit int, expires time.Time) (int, error) {
	w := window(now, span)
	mine := []byte(strconv.FormatInt(expires.Unix(), 10) + " " + randomTag())
	for n := max(from, 0); n < limit; n++ {
		got, err := s.st.CreateDoc(ctx, docLoginFail, numbered(k, w, n), mine)
		if err != nil {
			return 0, err
		}
		if string(got) == string(mine) {
			return n, nil
		}
	}
	return -1, nil
}

// exists reports whether the document key exists.
func (s *SharedFailures) exists(ctx context.Context, key string) (bool, error) {
	_, err := s.st.GetDoc(ctx, docLoginFail, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// accountNumbers is how many failures of an account's window are
// numbered: past them the back-off is at its maximum.
func accountNumbers(cfg ThrottleConfig) int { return cfg.AccountThreshold + cfg.backoffSteps() + 1 }

// account reads an account's counter at now: its state, with the count
// of the current window raised to the numbered failures, which the state
// may lag (its writers race). From the state's count on, it looks for the
// first free number, doubling its steps: one read when the state is
// right.
func (s *SharedFailures) account(ctx context.Context, cfg ThrottleConfig, k key, now time.Time) (counter, error) {
	c, err := s.state(ctx, k)
	if err != nil {
		return counter{}, err
	}
	w, limit := window(now, cfg.AccountWindow), accountNumbers(cfg)
	if c.win != w || int(c.n) >= limit {
		return c, nil
	}
	// Numbers below taken are taken; free is free, or the limit.
	taken, free, step := int(c.n)-1, int(c.n), 1
	for free < limit {
		ok, err := s.exists(ctx, numbered(k, w, free))
		if err != nil {
			return counter{}, err
		}
		if !ok {
			break
		}
		taken, free, step = free, min(free+step, limit), step*2
	}
	for free-taken > 1 {
		mid := (taken + free) / 2
		ok, err := s.exists(ctx, numbered(k, w, mid))
		if err != nil {
			return counter{}, err
		}
		if ok {
			taken = mid
		} else {
			free = mid
		}
	}
	c.n = int32(max(int(c.n), free))
	return c, nil
}

// state reads an account's state; the zero counter when it has none (or
// one that does not parse: the numbered failures set it right).
func (s *SharedFailures) state(ctx context.Context, k key) (counter, error) {
	doc, err := s.st.GetDoc(ctx, docLoginFail, stateKey(k))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return counter{}, nil
	case err != nil:
		return counter{}, err
	}
	var c counter
	var expires int64
	if _, err := fmt.Sscanf(string(doc), "%d %d %d %d %d", &expires, &c.win, &c.n, &c.prev, &c.last); err != nil {
		return counter{}, nil
	}
	return c, nil
}

// Sweep removes the failure documents that have expired.
func (s *SharedFailures) Sweep(ctx context.Context) error {
	docs, err := s.st.ListDocs(ctx, docLoginFail)
	if err != nil {
		return err
	}
	now := s.now().Unix()
	for key, doc := range docs {
		end, _, _ := strings.Cut(string(doc), " ")
		if e, err := strconv.ParseInt(end, 10, 64); err != nil || e <= now {
			if err := s.st.DeleteDoc(ctx, docLoginFail, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// SweepEvery sweeps every interval until ctx ends.
func (s *SharedFailures) SweepEvery(ctx context.Context, every time.Duration, fail func(error)) {
	periodic.Run(ctx, every, s.Sweep, fail)
}

// randomTag tells this writer's document from another's.
func randomTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
