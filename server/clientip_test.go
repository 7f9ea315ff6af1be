package server

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	t.Parallel()
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 192.168.1.7, 2001:db8:ffff::/48")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, peer string
		headers    map[string][]string
		want       string
	}{
		{"no headers", "10.1.2.3:5000", nil, "10.1.2.3"},
		{"an untrusted peer's X-Forwarded-For is ignored", "203.0.113.9:5000", map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.9"},
		{"a trusted peer's X-Forwarded-For", "10.1.2.3:5000", map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"trusted hops are walked past, right to left", "10.1.2.3:5000", map[string][]string{"X-Forwarded-For": {"1.1.1.1, 198.51.100.1, 192.168.1.7", "10.9.9.9"}}, "198.51.100.1"},
		{"what a client wrote left of the proxy's entry is not believed", "10.1.2.3:5000", map[string][]string{"X-Forwarded-For": {"10.0.0.1, 198.51.100.1"}}, "198.51.100.1"},
		{"every hop trusted: the farthest", "10.1.2.3:5000", map[string][]string{"X-Forwarded-For": {"10.0.0.9, 10.0.0.8"}}, "10.0.0.9"},
		{"garbage ends the walk at the last trusted hop", "10.1.2.3:5000", map[string][]string{"X-Forwarded-For": {"198.51.100.1, not-an-ip, 10.0.0.8"}}, "10.0.0.8"},
		{"Forwarded wins over X-Forwarded-For", "10.1.2.3:5000", map[string][]string{
			"Forwarded": {`for=198.51.100.2;proto=https, for="[2001:db8::7]:4711"`}, "X-Forwarded-For": {"198.51.100.3"}}, "2001:db8::7"},
		{"Forwarded through a trusted IPv6 proxy", "[2001:db8:ffff::1]:443", map[string][]string{"Forwarded": {`for=198.51.100.2, for="[2001:db8:ffff::2]"`}}, "198.51.100.2"},
		{"an obfuscated Forwarded identifier", "10.1.2.3:5000", map[string][]string{"Forwarded": {`for=_hidden`}}, "10.1.2.3"},
		{"IPv4-mapped IPv6", "[::ffff:10.1.2.3]:5000", map[string][]string{"X-Forwarded-For": {"::ffff:198.51.100.4"}}, "198.51.100.4"},
	} {
		req := &http.Request{RemoteAddr: c.peer, Header: http.Header(c.headers)}
		if got := clientIP(trusted)(req); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// None trusted: forwarded headers never count.
	req := &http.Request{RemoteAddr: "127.0.0.1:1", Header: http.Header{"X-Forwarded-For": {"198.51.100.1"}}}
	if got := clientIP(nil)(req); got != "127.0.0.1" {
		t.Errorf("no trusted proxies: %s", got)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.local", "10.0.0.1,,nope"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
	if got, err := ParseTrustedProxies(" 10.1.2.3/8 ,::1"); err != nil || len(got) != 2 || got[0] != netip.MustParsePrefix("10.0.0.0/8") || got[1] != netip.MustParsePrefix("::1/128") {
		t.Errorf("ParseTrustedProxies: %v %v", got, err)
	}
}
