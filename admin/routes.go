package admin

import (
	"github.com/labstack/echo/v4"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
)

// Routes is the /admin/v1 group: every route added through it answers
// only to the admin token. The parts of the admin API (Handler, Functions,
// Registry) mount their routes on Routes and on nothing else, so a route
// without the check cannot be written. The check is attached per route
// rather than with echo's Group.Use, which would make echo answer 404
// instead of 405 for a wrong method on an admin path.
type Routes struct {
	g         *echo.Group
	tokenHash [32]byte
}

// Mount returns the /admin/v1 group of e, guarded by the admin token whose
// SHA-256 is tokenHash (see SetupToken).
func Mount(e *echo.Echo, tokenHash [32]byte) Routes {
	return Routes{g: e.Group("/admin/v1"), tokenHash: tokenHash}
}

// GET mounts a GET route behind the admin token.
func (r Routes) GET(path string, h echo.HandlerFunc) { r.g.GET(path, h, r.authorize) }

// POST mounts a POST route behind the admin token.
func (r Routes) POST(path string, h echo.HandlerFunc) { r.g.POST(path, h, r.authorize) }

// PUT mounts a PUT route behind the admin token.
func (r Routes) PUT(path string, h echo.HandlerFunc) { r.g.PUT(path, h, r.authorize) }

// PATCH mounts a PATCH route behind the admin token.
func (r Routes) PATCH(path string, h echo.HandlerFunc) { r.g.PATCH(path, h, r.authorize) }

// DELETE mounts a DELETE route behind the admin token.
func (r Routes) DELETE(path string, h echo.HandlerFunc) { r.g.DELETE(path, h, r.authorize) }

// authorize lets a request through only with the admin token in its
// authorization header (bare or "Bearer <token>"), compared in constant
// time through its hash.
func (r Routes) authorize(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		token := auth.BearerToken(c.Request().Header.Get(echo.HeaderAuthorization))
		if token == "" {
			return errcode.New(errcode.Unauthenticated, "admin token required: send it in the authorization header")
		}
		if !auth.TokenMatches(token, r.tokenHash) {
			return errcode.New(errcode.Unauthenticated, "invalid admin token")
		}
		return next(c)
	}
}
