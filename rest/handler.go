package rest

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/door"
)

// Engine runs the documents REST rewrites requests into (*gql.Engine).
type Engine interface {
	// door.Engine opens a request (door.Resolve: its instance from
	// core-domain, its caller from authorization, and its schema, found
	// after by door.EnvFrom) and holds the instances CORS reads.
	door.Engine
	// Run runs a document in a request's environment, leaving the answer
	// encoded.
	Run(ctx context.Context, env gql.Env, req gql.Request) *gql.Result
}

var _ Engine = (*gql.Engine)(nil)

// Handler serves /rest/v1.
type Handler struct {
	engine Engine
	apis   apiCache
}

// New returns the /rest/v1 handler: requests run on engine.
func New(engine Engine) *Handler {
	return &Handler{engine: engine}
}

// methods are the methods of the routes, for CORS.
const methods = "GET, POST, PUT, DELETE, OPTIONS"

// Register mounts the routes on g, the /rest/v1 group. Every route but
// OPTIONS runs behind door.Resolve (core-domain → instance,
// authorization → caller), after the CORS headers are set. OPTIONS needs
// neither.
func (h *Handler) Register(g *echo.Group) {
	cors, preflight := door.CORS(h.engine, methods)
	mw := []echo.MiddlewareFunc{cors, door.Resolve(h.engine)}
	for _, r := range []struct {
		path    string
		route   Route
		methods []string
	}{
		{"", RouteRecords, []string{http.MethodPost, http.MethodPut}},
		{"/", RouteRecords, []string{http.MethodPost, http.MethodPut}},
		{"/login", RouteLogin, []string{http.MethodPost}},
		{"/fn/:root/:fn", RouteFn, []string{http.MethodGet, http.MethodPost, http.MethodPut}},
		{"/aggregate/:aggregate", RouteAggregate, []string{http.MethodGet}},
		{"/:aggregate", RouteType, []string{http.MethodGet, http.MethodDelete}},
		{"/:aggregate/:id", RouteRecord, []string{http.MethodGet, http.MethodDelete}},
	} {
		g.Match(r.methods, r.path, chain(h.serve(r.route), mw...))
		g.OPTIONS(r.path, preflight)
		// A method a path does not take answers 405 there rather than
		// falling through to a parameter route (DELETE /aggregate/Book is
		// not DELETE /{type}/{id}).
		var others []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
			if !slices.Contains(r.methods, m) {
				others = append(others, m)
			}
		}
		g.Match(others, r.path, chain(notAllowed, cors))
	}
	g.GET("/openapi.json", chain(h.openAPI, mw...))
	g.OPTIONS("/openapi.json", preflight)
}

// chain wraps h in mw, the first outermost, once. Given to echo as a
// route's middleware, they would be wrapped around h again on every
// request: a closure each.
func chain(h echo.HandlerFunc, mw ...echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// notAllowed answers 405 METHOD_NOT_ALLOWED (server.ErrorHandler words it).
func notAllowed(echo.Context) error { return echo.ErrMethodNotAllowed }

// envOf returns the environment Resolve opened for the request.
func envOf(c echo.Context) (gql.Env, error) {
	e, ok := door.EnvFrom(c.Request().Context())
	if !ok {
		return e, errcode.New(errcode.Internal, "internal error")
	}
	return e, nil
}

// serve answers one request of a route: rewrite, run, shape the answer.
func (h *Handler) serve(route Route) echo.HandlerFunc {
	return func(c echo.Context) error {
		r, err := readRequest(c, route)
		if err != nil {
			return err
		}
		env, err := envOf(c)
		if err != nil {
			return err
		}
		p, err := Rewrite(h.apis.get(env.Schema), r)
		if err != nil {
			return err
		}
		// Run leaves the answer encoded as the executor wrote it; answer
		// decodes it only for the shapes that look into it.
		res := h.engine.Run(c.Request().Context(), env, p.GraphQL)
		defer res.Release()
		if res.RetryAfter > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(res.RetryAfter))
		}
		status, body := answer(p, res)
		if r, ok := body.(*gql.Result); ok {
			b, err := r.Body()
			if err != nil {
				return errcode.Wrap(errcode.Internal, err, "internal error")
			}
			return door.WriteJSON(c, status, b)
		}
		return c.JSON(status, body)
	}
}

// readRequest collects what the rewrite needs of an HTTP request: path
// parameters, query string and, for POST and PUT, the body as one JSON
// object.
func readRequest(c echo.Context, route Route) (Request, error) {
	req := c.Request()
	r := Request{Method: req.Method, Route: route}
	// The parameters go through an array, not pointers into r: those
	// would move r to the heap.
	var params [4]string
	for i, name := range [...]string{"aggregate", "id", "root", "fn"} {
		v := c.Param(name)
		if req.URL.RawPath != "" {
			// echo matched the escaped path: its parameters are escaped too.
			u, err := url.PathUnescape(v)
			if err != nil {
				return r, errcode.New(errcode.BadRequest, "the path is malformed: %s", err)
			}
			v = u
		}
		params[i] = v
	}
	r.Aggregate, r.ID, r.Root, r.Fn = params[0], params[1], params[2], params[3]
	q, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return r, errcode.New(errcode.BadRequest, "the query string is malformed: %s", err)
	}
	r.Query = q
	if req.Method == http.MethodPost || req.Method == http.MethodPut {
		b, err := errcode.ReadBody(req, 0)
		if err != nil {
			return r, err
		}
		if r.Body, err = decodeObject(b); err != nil {
			return r, err
		}
	}
	return r, nil
}

// answer shapes a GraphQL result as the HTTP answer of a plan. A failed
// result answers the errors envelope with the status of the first
// error's code; a success {"data": …} with 200, except a record read that
// found nothing (404 NOT_FOUND) and a login that failed (401, the body as
// it is, so the client reads errorCode).
func answer(p Plan, res *gql.Result) (int, any) {
	if len(res.Errors) > 0 {
		status := http.StatusInternalServerError
		if code, ok := res.Errors[0].Extensions["code"].(string); ok {
			status = errcode.Code(code).Status()
		}
		// The envelope of DESIGN.md: message and extensions; the GraphQL
		// path of an error means nothing to a REST client.
		items := make([]errcode.Item, len(res.Errors))
		for i, e := range res.Errors {
			items[i] = errcode.Item{Message: e.Message, Extensions: e.Extensions}
		}
		return status, errcode.Envelope{Errors: items}
	}
	switch p.Shape {
	case ShapeRecord:
		if !res.HasItems(p.Field, "edges") {
			return errcode.Body(errcode.New(errcode.NotFound, "%s %s not found", p.Type, quoteShort(p.ID)))
		}
	case ShapeLogin:
		if lookup(res.Value(), p.Field, "errorCode") != nil {
			return http.StatusUnauthorized, res
		}
	}
	return http.StatusOK, res
}

// lookup walks decoded result data by object keys; nil when a step is
// missing.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// openAPI answers GET /openapi.json: the OpenAPI 3.1 description of the
// instance's REST interface, generated from its schema. It shows the
// schema, so it needs a token unless the instance allows anonymous
// requests (as GraphQL introspection does).
func (h *Handler) openAPI(c echo.Context) error {
	env, err := envOf(c)
	if err != nil {
		return err
	}
	if err := env.Unauthenticated(); err != nil {
		return err
	}
	if env.Principal.Kind == auth.Anonymous && !env.Instance.Settings.AnonymousRequests {
		return errcode.New(errcode.Unauthenticated, "authorization required: send a token in the authorization header")
	}
	doc, err := h.apis.get(env.Schema).OpenAPI(env.Release)
	if err != nil {
		return err
	}
	return door.WriteJSON(c, http.StatusOK, doc)
}
