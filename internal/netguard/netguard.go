// Package netguard decides which network addresses the service's own
// outbound requests may reach: function fetch (package fn) and event
// hook deliveries (package hooks) connect only to public addresses, so
// that a tenant cannot make the service call its loopback, its private
// network or a cloud metadata endpoint. Callers check the address they
// are about to connect to, after DNS resolution (a net.Dialer Control).
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrNotPublic: an address that is not on the public internet was
// refused.
var ErrNotPublic = errors.New("address is not public")

// nonPublic lists the special-purpose ranges (IANA registries) that
// netip's predicates do not cover: a function must reach none of them,
// whatever a DNS name resolves to.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (would reach IPv4 inside)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local NAT64
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments, Teredo
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4 (would reach IPv4 inside)
	netip.MustParsePrefix("fec0::/10"),       // site-local
}

// Public refuses every address that is not on the public internet:
// loopback, private, link-local, multicast, unspecified and the special
// ranges above, IPv4-mapped IPv6 included.
func Public(a netip.Addr) error {
	a = a.Unmap()
	if !a.IsValid() || a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return fmt.Errorf("%w: %s", ErrNotPublic, a)
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return fmt.Errorf("%w: %s", ErrNotPublic, a)
		}
	}
	return nil
}
