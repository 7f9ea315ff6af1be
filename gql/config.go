package gql

import (
	"time"

	"github.com/corehq/core/internal/defaults"
	"github.com/corehq/core/tenant"
)

// Config bounds what one GraphQL request may ask for. A figure that is 0
// (or negative) is DefaultConfig's: Build and NewEngine apply the defaults
// once (withDefaults), so no reader patches a zero value of its own.
type Config struct {
	// MaxDepth is the deepest selection nesting a document may have.
	MaxDepth int
	// MaxAliases is the most aliased fields a document may have.
	MaxAliases int
	// MaxComplexity bounds the estimated work of a document (each field
	// counts one, a list field multiplies its selection by its page size).
	MaxComplexity int
	// MaxTokens bounds the tokens of a document text.
	MaxTokens int
	// DefaultPageSize is the page size of find without first/last.
	DefaultPageSize int
	// MaxPageSize is the largest first/last accepted; above is an error.
	MaxPageSize int
	// DocumentCacheSize is how many parsed and validated documents each
	// compiled schema keeps.
	DocumentCacheSize int
	// MaxHopResults bounds the records a reference hop of a filter may match.
	MaxHopResults int
	// MaxSubscriptions is the most subscriptions one connection (a
	// WebSocket) may run at once.
	MaxSubscriptions int
	// SubscriptionQueue is the most events of a subscription that may
	// wait for a client that reads too slowly; past it the subscription
	// ends with SUBSCRIPTION_LIMIT.
	SubscriptionQueue int
	// SubscriptionTail is how many of an instance's newest changes its
	// subscribers' shared reader of the feed keeps in memory (feed.go): how
	// far a subscriber may lag behind the newest change and still read
	// from memory.
	SubscriptionTail int
	// SessionCheck is how often a subscription checks that its caller's
	// token still holds (a logout, a disabled account, an expired
	// session end it).
	SessionCheck time.Duration
	// RateLimit is the request rate of instances that set none
	// (tenant.RateLimiter); nil: unlimited.
	RateLimit *tenant.RateLimit
}

// DefaultConfig returns the limits the service runs with by default.
func DefaultConfig() Config {
	return Config{
		MaxDepth:          20,
		MaxAliases:        30,
		MaxComplexity:     100_000,
		MaxTokens:         10_000,
		DefaultPageSize:   25,
		MaxPageSize:       1000,
		DocumentCacheSize: 1000,
		MaxHopResults:     10_000,
		MaxSubscriptions:  100,
		SubscriptionQueue: 1000,
		SubscriptionTail:  1024,
		SessionCheck:      5 * time.Second,
	}
}

// withDefaults returns c with DefaultConfig's value in place of each figure
// (a count or a duration) that is 0 or negative (defaults.Fill), none of
// which would bound anything sensibly (a page of 0 records, a queue of
// none). RateLimit stays as it is: nil is no limit. Build and NewEngine
// call it; it is the one place defaults are applied, and it covers a
// figure added to Config without being told.
func (c Config) withDefaults() Config { return defaults.Fill(c, DefaultConfig()) }
