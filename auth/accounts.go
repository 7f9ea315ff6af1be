package auth

import (
	"sync/atomic"
	"time"
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
}

// NewAccounts returns Accounts with the given session secret, OWASP's
// Argon2id parameters and the default throttle.
func NewAccounts(secret []byte) *Accounts {
	a := &Accounts{Sessions: NewSessions(secret), Argon2: DefaultArgon2()}
	a.Throttle = NewThrottle(DefaultThrottleConfig(), a.Now)
	a.dummy = a.Argon2.Hash("core dummy password for unknown users")
	return a
}

// VerifyUnknown spends the time of one password verification, for a login
// whose user does not exist.
func (a *Accounts) VerifyUnknown(pw string) { a.Argon2.Verify(pw, a.dummy) }

// Now is the time sessions and the throttle go by.
func (a *Accounts) Now() time.Time {
	return time.Now().Add(time.Duration(a.skew.Load()))
}

// Shift moves the clock forward by d. Tests use it to expire sessions and
// throttle windows without sleeping; safe for concurrent use.
func (a *Accounts) Shift(d time.Duration) { a.skew.Add(int64(d)) }
