package auth

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/keyring"
)

// Accounts bundles what logins and session checks need: the session
// signer, the password hashing parameters, the login throttle and the
// clock. One value serves the whole process.
type Accounts struct {
	Sessions *Sessions
	Argon2   Argon2
	Throttle *Throttle
	// skew moves the clock (nanoseconds); see Shift.
	skew atomic.Int64
	// dummy is a hash verified for unknown users, so that an unknown user
	// and a wrong password take the same time.
	dummy string
	// hashing holds one slot per password hash being computed. Argon2id
	// is CPU-bound and takes Argon2.MemoryKiB (19 MiB) per hash: more
	// hashes at once than there are CPUs finish no sooner, and 32 logins
	// at once would need 600 MiB. Callers beyond the bound wait their
	// turn (until their request's context ends).
	hashing chan struct{}
}

// NewAccounts returns Accounts signing sessions with the keys of keys,
// OWASP's Argon2id parameters and the default throttle. At most
// GOMAXPROCS password hashes run at once.
func NewAccounts(keys *keyring.Keeper) *Accounts {
	a := &Accounts{Sessions: NewSessions(keys), Argon2: DefaultArgon2()}
	a.Throttle = NewThrottle(DefaultThrottleConfig(), a.Now)
	a.hashing = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	a.dummy = a.Argon2.Hash("core dummy password for unknown users")
	return a
}

// SetArgon2 hashes with p from now on, and verifies unknown users
// against a hash made with p, so that they still take the time of a
// known user. Call before use (tests use small parameters).
func (a *Accounts) SetArgon2(p Argon2) {
	a.Argon2 = p
	a.dummy = p.Hash("core dummy password for unknown users")
}

// HashPassword returns the PHC string of pw hashed with a.Argon2, waiting
// for a hashing slot first. It fails only when ctx ends while waiting.
func (a *Accounts) HashPassword(ctx context.Context, pw string) (string, error) {
	if err := a.acquire(ctx); err != nil {
		return "", err
	}
	defer a.release()
	return a.Argon2.Hash(pw), nil
}

// VerifyPassword reports whether pw matches the PHC string and whether the
// hash should be replaced (see Argon2.Verify), waiting for a hashing slot
// first. It fails only when ctx ends while waiting.
func (a *Accounts) VerifyPassword(ctx context.Context, pw, phc string) (ok, rehash bool, err error) {
	if err := a.acquire(ctx); err != nil {
		return false, false, err
	}
	defer a.release()
	ok, rehash = a.Argon2.Verify(pw, phc)
	return ok, rehash, nil
}

// VerifyUnknown spends the time of one password verification, for a login
// whose user does not exist.
func (a *Accounts) VerifyUnknown(ctx context.Context, pw string) error {
	_, _, err := a.VerifyPassword(ctx, pw, a.dummy)
	return err
}

// HashingSlots is how many password hashes may run at once.
func (a *Accounts) HashingSlots() int { return cap(a.hashing) }

func (a *Accounts) acquire(ctx context.Context) error {
	select {
	case a.hashing <- struct{}{}:
		return nil
	default:
	}
	select {
	case a.hashing <- struct{}{}:
		return nil
	case <-ctx.Done():
		return errcode.Wrap(errcode.Timeout, ctx.Err(), "the server is busy hashing passwords; try again")
	}
}

// release frees a hashing slot, then collects the hash's memory at once.
// Left to the pacer, a collection that ran mid-hash counts the 19 MiB as
// live and lets the heap grow to twice that before the next: measured with
// corebench (login, then GET), peak RSS 96 MB and 82 MB while serving GETs
// after; collecting here, 80 MB and 43 MB, for about 1 ms more CPU per
// login (≈40 ms). Small test parameters skip it.
func (a *Accounts) release() {
	<-a.hashing
	if a.Argon2.MemoryKiB >= 4<<10 {
		runtime.GC()
	}
}

// Now is the time sessions and the throttle go by.
func (a *Accounts) Now() time.Time {
	return time.Now().Add(time.Duration(a.skew.Load()))
}

// Shift moves the clock forward by d. Tests use it to expire sessions and
// throttle windows without sleeping; safe for concurrent use.
func (a *Accounts) Shift(d time.Duration) { a.skew.Add(int64(d)) }
