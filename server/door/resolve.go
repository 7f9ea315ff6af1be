package door

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/tenant"
)

// Engine is what the door middleware needs of the engine (*gql.Engine):
// the directory it resolves instances in, and the opening of a request.
type Engine interface {
	// Instances returns the directory of the instances the engine serves.
	Instances() *tenant.Directory
	// Open returns the environment of a request for inst by the caller
	// whose authorization header value is authorization.
	Open(ctx context.Context, inst *tenant.Instance, authorization, clientIP string) (gql.Env, error)
}

var _ Engine = (*gql.Engine)(nil)

// Resolve is the middleware of the doors that name their instance in the
// core-domain header (/graphql, /rest/v1): it opens the request
// (Engine.Open) and puts its environment in the request context, where
// EnvFrom finds it. A missing header is BAD_REQUEST, an unknown domain
// UNKNOWN_DOMAIN.
func Resolve(e Engine) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			inst, err := e.Instances().Resolve(req.Header.Values(tenant.Header))
			if err != nil {
				return err
			}
			ctx := tenant.WithInstance(req.Context(), inst) // for the request's log line
			env, err := e.Open(ctx, inst, req.Header.Get("authorization"), c.RealIP())
			if err != nil {
				c.SetRequest(req.WithContext(ctx))
				return WriteError(c, err)
			}
			c.SetRequest(req.WithContext(context.WithValue(ctx, envKey{}, &env)))
			return next(c)
		}
	}
}

type envKey struct{}

// EnvFrom returns the environment Resolve opened for a request; ok is
// false for a request that did not pass Resolve.
func EnvFrom(ctx context.Context) (env gql.Env, ok bool) {
	p, ok := ctx.Value(envKey{}).(*gql.Env)
	if !ok {
		return gql.Env{}, false
	}
	return *p, true
}
