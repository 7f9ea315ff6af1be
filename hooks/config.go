package hooks

import (
	"time"

	"github.com/corehq/core/internal/defaults"
)

// Config bounds and paces the deliveries. The zero value of a field is
// its default (DefaultConfig).
type Config struct {
	// AllowPrivate lets hooks post to loopback, private and link-local
	// addresses (cored serve --hook-allow-private).
	AllowPrivate bool
	// Timeout bounds one post, connection included.
	Timeout time.Duration
	// MaxResponse is how much of an answer is read.
	MaxResponse int64
	// BackoffMin is the wait after a first failure; each further failure
	// doubles it, up to BackoffMax.
	BackoffMin, BackoffMax time.Duration
	// RetryFor is how long a hook may keep failing before the service
	// disables it.
	RetryFor time.Duration
	// Shared: other processes deliver from the same store (MongoDB), so
	// an instance's hooks are delivered under a lease (lease.go).
	Shared bool
	// Lease is how long a lease holds without renewal.
	Lease time.Duration
	// Scan is how often the service looks for instances with hooks and
	// renews its leases; a worker reads its instance's hooks again as
	// often (and when one changes).
	Scan time.Duration
	// LogSize is how many attempts a hook's delivery log keeps.
	LogSize int
	// SaveEvery is how often a hook's cursor is written while it delivers
	// (and always after a failure, when it stops, and when it is idle):
	// what a killed process may post again.
	SaveEvery time.Duration
	// Parallel is how many posts of one hook may be under way at once
	// (for different records: a record's changes go one at a time).
	Parallel int
}

// DefaultConfig is the configuration of cored.
func DefaultConfig() Config {
	return Config{
		Timeout:     10 * time.Second,
		MaxResponse: 64 << 10,
		BackoffMin:  time.Second,
		BackoffMax:  time.Hour,
		RetryFor:    24 * time.Hour,
		Lease:       30 * time.Second,
		Scan:        time.Second,
		LogSize:     100,
		SaveEvery:   250 * time.Millisecond,
		Parallel:    16,
	}
}

func (c Config) withDefaults() Config {
	c = defaults.Fill(c, DefaultConfig())
	// A post must end well within the lease that allowed it to start.
	c.Lease = max(c.Lease, 3*c.Timeout)
	return c
}

// backoff is the wait after the n-th failure of a change (n ≥ 1).
func (c Config) backoff(n int) time.Duration {
	d := c.BackoffMin
	for i := 1; i < n && d < c.BackoffMax; i++ {
		d *= 2
	}
	return min(d, c.BackoffMax)
}
