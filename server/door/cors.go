package door

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/tenant"
)

// What a page of an allowed origin may use on the doors that name their
// instance in core-domain (/graphql, /rest/v1). The headers are the ones
// those doors read (content-type: application/json is not one a browser
// sends without asking). Webhooks are server to server: no CORS.
const (
	corsHeaders = "authorization, content-type, core-domain, x-request-id"
	corsExpose  = "retry-after, x-request-id"
	// corsMaxAge is how long, in seconds, a browser may keep a preflight's
	// answer.
	corsMaxAge = "600"
)

// CORS returns the cross-origin policy of a door whose routes allow
// methods (for example "GET, POST, OPTIONS"): middleware that gives an
// answer the CORS headers of the origin that asked when the instance's
// policy (Settings.CORS) allows that origin, to run before Resolve so that
// the failures of resolving are readable by an allowed page too; and the
// handler of the door's OPTIONS routes.
func CORS(e Engine, methods string) (echo.MiddlewareFunc, echo.HandlerFunc) {
	mw := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if origin := req.Header.Get("Origin"); origin != "" {
				hdr := c.Response().Header()
				hdr.Add("Vary", "Origin")
				if allowsOrigin(e.Instances(), req, origin) {
					hdr.Set("Access-Control-Allow-Origin", origin)
					hdr.Set("Access-Control-Expose-Headers", corsExpose)
				}
			}
			return next(c)
		}
	}
	// The preflight answers without a token: 204 with Allow and, for a
	// CORS preflight from an allowed origin, the methods and headers it
	// may use. An origin not allowed gets no CORS headers, which a
	// browser takes as a refusal.
	preflight := func(c echo.Context) error {
		req := c.Request()
		hdr := c.Response().Header()
		hdr.Set("Allow", methods)
		origin := req.Header.Get("Origin")
		if origin == "" || req.Header.Get("Access-Control-Request-Method") == "" {
			return c.NoContent(http.StatusNoContent)
		}
		hdr.Add("Vary", "Origin")
		hdr.Add("Vary", "Access-Control-Request-Method")
		hdr.Add("Vary", "Access-Control-Request-Headers")
		if allowsOrigin(e.Instances(), req, origin) {
			hdr.Set("Access-Control-Allow-Origin", origin)
			hdr.Set("Access-Control-Allow-Methods", methods)
			hdr.Set("Access-Control-Allow-Headers", corsHeaders)
			hdr.Set("Access-Control-Max-Age", corsMaxAge)
		}
		return c.NoContent(http.StatusNoContent)
	}
	return mw, preflight
}

// allowsOrigin reports whether the policy of the request's instance
// allows origin. A browser's preflight carries no core-domain (it sends
// only the names of the headers the real request will carry), so a
// request without one is allowed when some instance allows the origin; the
// real request, which names its instance, is then answered with CORS
// headers only if that instance allows the origin, so a page of another
// origin cannot read its answer.
func allowsOrigin(instances *tenant.Directory, req *http.Request, origin string) bool {
	if domain := req.Header.Get(tenant.Header); domain != "" {
		inst, ok := instances.Lookup(domain)
		return ok && inst.Settings.CORS.Allows(origin)
	}
	for _, inst := range instances.Instances() {
		if inst.Settings.CORS.Allows(origin) {
			return true
		}
	}
	return false
}
