package tenant

import (
	"strings"

	"github.com/corehq/core/errcode"
)

// Header names the instance a data request is for.
const Header = "core-domain"

// Resolve returns the instance a data request names in its core-domain
// header, given the header's values as received: a missing domain is
// BAD_REQUEST, and so are two different domains (two headers, or one
// with a comma) rather than a guess between them; a domain no instance
// serves is UNKNOWN_DOMAIN. It is a lock-free map lookup.
func (r *Directory) Resolve(values []string) (*Instance, error) {
	domain := ""
	for _, v := range values {
		for _, d := range strings.Split(v, ",") {
			d = strings.TrimSpace(d)
			switch {
			case d == "" || NormalizeDomain(d) == NormalizeDomain(domain):
			case domain == "":
				domain = d
			default:
				return nil, errcode.New(errcode.BadRequest, "the %s header names more than one domain (%q and %q); send one", Header, cut(domain), cut(d))
			}
		}
	}
	if domain == "" {
		return nil, errcode.New(errcode.BadRequest, "%s header is required", Header)
	}
	inst, ok := r.Lookup(domain)
	if !ok {
		if len(domain) > maxDomainLen {
			return nil, errcode.New(errcode.UnknownDomain, "unknown domain: no instance serves it (and it is longer than a host name may be)")
		}
		return nil, errcode.New(errcode.UnknownDomain, "unknown domain %q: no instance serves it", domain)
	}
	return inst, nil
}

// cut shortens a domain quoted in an error to a host name's length.
func cut(d string) string {
	if len(d) > maxDomainLen {
		return d[:maxDomainLen] + "…"
	}
	return d
}
