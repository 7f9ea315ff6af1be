package tenant

import (
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
)

// Header names the instance a data request is for.
const Header = "core-domain"

// Middleware resolves the core-domain header of a request to its instance
// and puts it in the request context (FromContext). A missing header is
// BAD_REQUEST, a domain no instance has UNKNOWN_DOMAIN.
func Middleware(reg *Registry) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			domain := req.Header.Get(Header)
			if domain == "" {
				return errcode.New(errcode.BadRequest, "%s header is required", Header)
			}
			inst, ok := reg.Lookup(domain)
			if !ok {
				if len(domain) > maxDomainLen {
					return errcode.New(errcode.UnknownDomain, "unknown domain: no instance serves it (and it is longer than a host name may be)")
				}
				return errcode.New(errcode.UnknownDomain, "unknown domain %q: no instance serves it", domain)
			}
			c.SetRequest(req.WithContext(WithInstance(req.Context(), inst)))
			return next(c)
		}
	}
}
