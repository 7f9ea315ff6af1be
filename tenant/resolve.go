package tenant

import (
	"github.com/corehq/core/errcode"
)

// Header names the instance a data request is for.
const Header = "core-domain"

// Resolve returns the instance a data request names in its core-domain
// header: a missing domain is BAD_REQUEST, a domain no instance serves
// UNKNOWN_DOMAIN. It is a lock-free map lookup.
func (r *Directory) Resolve(domain string) (*Instance, error) {
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
