package fn

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// errNotPublic: fetch refused an address that is not on the public
// internet.
var errNotPublic = errors.New("address is not public")

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

// publicAddr refuses every address that is not on the public internet:
// loopback, private, link-local, multicast, unspecified and the special
// ranges above, IPv4-mapped IPv6 included.
func publicAddr(a netip.Addr) error {
	a = a.Unmap()
	if !a.IsValid() || a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return fmt.Errorf("%w: %s", errNotPublic, a)
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return fmt.Errorf("%w: %s", errNotPublic, a)
		}
	}
	return nil
}

// hostAllowed reports whether u's host is on an allow-list: an entry
// names a host exactly, or "*.example.com" names every subdomain of
// example.com (not example.com itself). Names compare case-insensitively
// and without a trailing dot; ports do not matter.
func hostAllowed(allow []string, u *url.URL) bool {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return false
	}
	for _, entry := range allow {
		e := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(entry)), ".")
		if sub, ok := strings.CutPrefix(e, "*."); ok {
			if sub != "" && strings.HasSuffix(host, "."+sub) {
				return true
			}
			continue
		}
		if e != "" && host == strings.Trim(e, "[]") {
			return true
		}
	}
	return false
}
