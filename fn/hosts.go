package fn

import (
	"net/url"
	"strings"
)

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
