package auth

import (
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/tenant"
)

// Middleware resolves the caller of a request to an instance (which
// tenant's middleware has put in the context) from its authorization
// header and puts the Principal in the request context. A present but
// unknown token answers 401; no token is Anonymous, which passes only when
// the instance allows anonymous requests.
func Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			inst := tenant.FromContext(req.Context())
			if inst == nil {
				return errcode.Write(c, errcode.New(errcode.Internal, "internal error"))
			}
			p, err := Authenticate(inst, req.Header.Get("authorization"))
			if err != nil {
				return errcode.Write(c, err)
			}
			c.SetRequest(req.WithContext(WithPrincipal(req.Context(), p)))
			return next(c)
		}
	}
}

// Authenticate returns the principal an authorization header value makes
// on inst.
func Authenticate(inst *tenant.Instance, header string) (Principal, error) {
	token := BearerToken(header)
	if token == "" {
		if !inst.Settings.AnonymousRequests {
			return Principal{}, errcode.New(errcode.Unauthenticated, "authorization required: send the instance token in the authorization header")
		}
		return Principal{Kind: Anonymous}, nil
	}
	if TokenMatches(token, inst.TokenHash) {
		return Principal{Kind: InstanceAdmin, AccountID: inst.AdminAccountID}, nil
	}
	return Principal{}, errcode.New(errcode.Unauthenticated, "invalid token")
}
