package auth

import (
	"context"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Middleware resolves the caller of a request to an instance (which
// tenant's middleware has put in the context) from its authorization
// header and puts the Principal in the request context. A present but
// invalid token answers 401. No token is Anonymous; what an anonymous
// caller may do is decided where the operation is known (gql).
func (a *Accounts) Middleware(st store.Store) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			inst := tenant.FromContext(req.Context())
			if inst == nil {
				return errcode.Write(c, errcode.New(errcode.Internal, "internal error"))
			}
			p, err := a.Authenticate(req.Context(), st, inst, req.Header.Get("authorization"))
			if err != nil {
				return errcode.Write(c, err)
			}
			c.SetRequest(req.WithContext(WithPrincipal(req.Context(), p)))
			return next(c)
		}
	}
}

// Authenticate returns the principal an authorization header value makes
// on inst: the instance token, a live session of one of its enabled
// accounts, or nobody.
func (a *Accounts) Authenticate(ctx context.Context, st store.Store, inst *tenant.Instance, header string) (Principal, error) {
	token := BearerToken(header)
	switch {
	case token == "":
		return Principal{Kind: Anonymous}, nil
	case IsSessionToken(token):
		claims, err := a.Sessions.Parse(inst.ID, token, a.Now())
		if err != nil {
			return Principal{}, errcode.New(errcode.Unauthenticated, "invalid or expired session token")
		}
		acct, err := st.Get(ctx, inst.ID, "Account", claims.Account)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (acct.Trashed != nil || acct.Fields["enabled"] == false || Revoked(acct, claims))) {
			return Principal{}, errcode.New(errcode.Unauthenticated, "invalid or expired session token")
		}
		if err != nil {
			return Principal{}, errcode.Wrap(errcode.Unavailable, err, "the store is unavailable; try again")
		}
		return Principal{Kind: User, AccountID: claims.Account, Session: claims.Session}, nil
	case TokenMatches(token, inst.TokenHash):
		return Principal{Kind: InstanceAdmin, AccountID: inst.AdminAccountID}, nil
	}
	return Principal{}, errcode.New(errcode.Unauthenticated, "invalid token")
}
