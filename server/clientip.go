package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"
)

// The client address (login throttling keys on it; the request log shows
// it) is the connection's peer, unless that peer is a trusted proxy
// (Config.TrustedProxies): then the forwarded chain is read from the
// right, the nearest hop first, past every trusted address, and the first
// address that is not trusted is the client. The chain is the Forwarded
// header's for= values (RFC 7239) when the request has one, else
// X-Forwarded-For. A hop that is not an address (a garbled value, an
// obfuscated identifier, "unknown") ends the walk at the last trusted hop:
// nothing beyond it can be believed. With no trusted proxies, forwarded
// headers are ignored, so that a client cannot pick the address its
// failed logins count against.

// ParseTrustedProxies reads a comma-separated list of CIDR prefixes or
// single addresses ("10.0.0.0/8, 192.168.1.7"), naming a bad entry.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxies: %q is neither a CIDR prefix nor an address", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// clientIP returns the IP extractor for trusted.
func clientIP(trusted []netip.Prefix) echo.IPExtractor {
	return func(req *http.Request) string {
		peer, ok := hostAddr(req.RemoteAddr)
		if !ok {
			return req.RemoteAddr
		}
		if !isTrusted(trusted, peer) {
			return peer.String()
		}
		client := peer
		for _, hop := range forwardedChain(req) {
			a, ok := hostAddr(hop)
			if !ok {
				break
			}
			client = a
			if !isTrusted(trusted, a) {
				break
			}
		}
		return client.String()
	}
}

func isTrusted(trusted []netip.Prefix, a netip.Addr) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedChain lists the forwarded hops, nearest first.
func forwardedChain(req *http.Request) []string {
	var hops []string
	if fw := req.Header.Values("Forwarded"); len(fw) > 0 {
		for _, line := range fw {
			for _, elem := range strings.Split(line, ",") {
				hop := "unknown"
				for _, pair := range strings.Split(elem, ";") {
					k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
					if ok && strings.EqualFold(k, "for") {
						hop = strings.Trim(v, `"`)
					}
				}
				hops = append(hops, hop)
			}
		}
	} else {
		for _, line := range req.Header.Values("X-Forwarded-For") {
			for _, h := range strings.Split(line, ",") {
				hops = append(hops, strings.TrimSpace(h))
			}
		}
	}
	for i, j := 0, len(hops)-1; i < j; i, j = i+1, j-1 {
		hops[i], hops[j] = hops[j], hops[i]
	}
	return hops
}

// hostAddr reads an address with or without a port ("192.0.2.1",
// "192.0.2.1:80", "[2001:db8::1]:443", "2001:db8::1"), IPv4-mapped IPv6
// as IPv4.
func hostAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
