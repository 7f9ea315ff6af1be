package gql

import (
	"context"
	"sync"

	"github.com/corehq/core/access"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/tenant"
)

// Subscriptions is the state of the subscriptions an engine runs, apart
// from the engine's other state: the context every subscription, event
// stream and WebSocket runs under (Close ends them all), the open
// subscription connections counted per instance and per caller
// (Connect), and the shared readers of the instances' feeds (feed.go).
// The transports reach it through Engine.Subscriptions. Safe for
// concurrent use.
type Subscriptions struct {
	// streams ends with Close.
	streams context.Context
	stop    context.CancelFunc
	// perConnection is the most subscriptions one connection may run
	// (Config.MaxSubscriptions).
	perConnection int
	// share counts the processes sharing the instances' bounds (nil: this
	// one alone; Engine's WithRateShare).
	share func() int
	// grants are the cache a tail forgets an instance's grants in when
	// its feed shows one changed.
	grants *access.Cache
	// conns counts the open subscription connections per instance and
	// callerConns per caller that holds some (Connect).
	connsMu     sync.Mutex
	conns       map[string]int
	callerConns map[connCaller]int
	// tails are the shared readers of the feeds of the instances with
	// subscriptions here (feed.go).
	tailsMu sync.Mutex
	tails   map[string]*feedTail
}

// newSubscriptions returns the subscriptions' state of an engine with
// cfg (its defaults applied, Config.withDefaults), whose processes share
// returns the count of (nil: one), over its grants.
func newSubscriptions(cfg Config, share func() int, grants *access.Cache) *Subscriptions {
	s := &Subscriptions{perConnection: cfg.MaxSubscriptions, share: share, grants: grants}
	s.streams, s.stop = context.WithCancel(context.Background())
	return s
}

// Close ends every subscription: event streams complete and WebSockets
// close with 1001 (going away). Engine.CloseStreams calls it.
func (s *Subscriptions) Close() { s.stop() }

// AfterClose arranges for f to run in its own goroutine once Close has
// ended the subscriptions (at once when it has), as context.AfterFunc
// does: a transport closes its connections then. stop cancels the
// arrangement, reporting whether it kept f from starting.
func (s *Subscriptions) AfterClose(f func()) (stop func() bool) {
	return context.AfterFunc(s.streams, f)
}

// PerConnection returns the most subscriptions one connection (a
// WebSocket) may run at once (Config.MaxSubscriptions).
func (s *Subscriptions) PerConnection() int { return s.perConnection }

// Connect counts a subscription connection (an event stream, a
// WebSocket) of env's instance by its caller, refused with
// SUBSCRIPTION_LIMIT when the instance has as many open in this process
// as its part of the setting subscriptionConnections allows, or the
// caller as many as its share (subscriptionConnectionsPerAccount;
// tenant.Settings.SubscriptionShares): an account counts its sessions
// together, an anonymous caller its client address (an IPv6 one its
// /64), and the instance token has no share but the instance's bound.
// Processes sharing a store divide both as they divide rate limits
// (WithRateShare), each allowing its part rounded up. Call release once
// when the connection ends.
func (s *Subscriptions) Connect(env Env) (release func(), err error) {
	inst, p := env.Instance, env.Principal
	limit, perAccount := inst.Settings.SubscriptionShares()
	part, share, n := limit, perAccount, 1
	if s.share != nil {
		n = max(1, s.share())
		part, share = (limit+n-1)/n, (perAccount+n-1)/n
	}
	caller := connCaller{inst: inst.ID}
	switch p.Kind {
	case auth.User:
		caller.key = "account " + p.AccountID
	case auth.Anonymous:
		caller.key = "address " + tenant.ClientKey(env.ClientIP)
	}
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if s.conns[inst.ID] >= part {
		if n > 1 {
			return nil, errcode.New(errcode.SubscriptionLimit,
				"the instance has %d subscription connections open in this process, its part (of %d processes) of the %d its setting subscriptionConnections allows: close one first", part, n, limit)
		}
		return nil, errcode.New(errcode.SubscriptionLimit,
			"the instance has %d subscription connections open, the most its setting subscriptionConnections allows: close one first", limit)
	}
	if caller.key != "" && s.callerConns[caller] >= share {
		who, its := "this account has", "its"
		if p.Kind == auth.Anonymous {
			who, its = "anonymous callers from this address have", "their"
		}
		if n > 1 {
			return nil, errcode.New(errcode.SubscriptionLimit,
				"%s %d subscription connections open in this process, the part (of %d processes) of %s share (setting subscriptionConnectionsPerAccount, %d) of the instance's %d: close one first", who, share, n, its, perAccount, limit)
		}
		return nil, errcode.New(errcode.SubscriptionLimit,
			"%s %d subscription connections open, %s share (setting subscriptionConnectionsPerAccount) of the instance's %d: close one first", who, perAccount, its, limit)
	}
	if s.conns == nil {
		s.conns, s.callerConns = map[string]int{}, map[connCaller]int{}
	}
	s.conns[inst.ID]++
	if caller.key != "" {
		s.callerConns[caller]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.connsMu.Lock()
			defer s.connsMu.Unlock()
			if s.conns[inst.ID]--; s.conns[inst.ID] <= 0 {
				delete(s.conns, inst.ID)
			}
			if caller.key != "" {
				if s.callerConns[caller]--; s.callerConns[caller] <= 0 {
					delete(s.callerConns, caller)
				}
			}
		})
	}, nil
}

// connCaller is whose share of an instance's subscription connections a
// connection takes: an account's, an anonymous client address's, or none
// (key empty: the instance token).
type connCaller struct{ inst, key string }
