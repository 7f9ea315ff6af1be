package tenant

import (
	"container/list"
	"net/netip"
)

// Callers without a valid token (no token, or a wrong, expired or revoked
// one) do not take from their instance's bucket when they arrive: anyone
// who knows a domain could otherwise keep a rate-limited instance
// answering 429 to its own users with junk tokens or logins. They take
// from a bucket of their own, per instance and client address, of the
// instance's rate and burst (so one address alone never gets more than
// the whole instance would, and never less than a client that logs in
// needs). What such a caller then runs decides whether it also takes from
// the instance's bucket: a login, or a request refused for its token or
// for being anonymous, takes nothing more; work the instance opens to
// anonymous callers (anonymousRequests, anonymousRegistration) takes a
// token of the instance's as any request does (Admit, called by the
// engine for that work), so the instance's rate still bounds what it
// serves.
//
// An IPv6 client counts by its /64 (one subscriber's network: a client
// picks any address in it), an IPv4 one by its address. Buckets live in
// this process and are divided among the processes sharing a store as
// the instance's are (the same share); at most maxAddresses are kept, the
// least recently used dropped first. A dropped bucket comes back full,
// which an address gains nothing from that its own bucket would not give
// it: the instance's bucket is never touched.

// maxAddresses bounds the address buckets one process keeps, over all
// instances: about 250 bytes each, 2.5 MB at most.
const maxAddresses = 10_000

// maxAddressKey bounds a client address's key (a peer that is not an
// address is keyed by what it is, cut to this).
const maxAddressKey = 64

// addressBuckets are the buckets of callers without a valid token, least
// recently used at the back. Guarded by RateLimiter.mu.
type addressBuckets struct {
	m   map[addressKey]*list.Element
	lru list.List // of *addressBucket
}

type addressKey struct{ inst, addr string }

type addressBucket struct {
	key addressKey
	b   bucket
}

// get returns the bucket of key, creating it (and dropping the least
// recently used past maxAddresses).
func (a *addressBuckets) get(key addressKey) *bucket {
	if a.m == nil {
		a.m = map[addressKey]*list.Element{}
	}
	if el, ok := a.m[key]; ok {
		a.lru.MoveToFront(el)
		return &el.Value.(*addressBucket).b
	}
	for len(a.m) >= maxAddresses {
		oldest := a.lru.Back()
		delete(a.m, oldest.Value.(*addressBucket).key)
		a.lru.Remove(oldest)
	}
	ab := &addressBucket{key: key}
	a.m[key] = a.lru.PushFront(ab)
	return &ab.b
}

// len is how many buckets are kept.
func (a *addressBuckets) len() int { return len(a.m) }

// forget drops the buckets of a deleted instance.
func (a *addressBuckets) forget(inst string) {
	for el := a.lru.Front(); el != nil; {
		next := el.Next()
		if ab := el.Value.(*addressBucket); ab.key.inst == inst {
			delete(a.m, ab.key)
			a.lru.Remove(el)
		}
		el = next
	}
}

// ClientKey is what a client address counts as, here and wherever the
// service bounds anonymous callers per address (the engine's share of
// subscription connections): an IPv6 address its /64, an IPv4 address (or
// an IPv4-mapped one) itself.
func ClientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		if len(ip) > maxAddressKey {
			ip = ip[:maxAddressKey]
		}
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// AdmitAddress takes one token of the bucket of a caller without a valid
// token from clientIP to inst, or answers RATE_LIMITED. An instance
// without a rate limit has no such bucket either.
func (l *RateLimiter) AdmitAddress(inst *Instance, clientIP string) error {
	lim := l.limitOf(inst)
	if lim == nil {
		return nil
	}
	key := addressKey{inst: inst.ID, addr: ClientKey(clientIP)}
	share, now := l.share(), l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	wait, ok := l.addrs.get(key).take(*lim, share, now)
	if ok {
		return nil
	}
	return rateLimited(wait,
		"too many requests without a valid token from %s to instance %s: requests that log in, or whose token is missing or refused, are limited per client address to the instance's rate of %g per second (burst %d), apart from the instance's own budget: retry after %d s",
		key.addr, inst.Domain, lim.RequestsPerSecond, lim.BurstOrRate(), wait)
}
