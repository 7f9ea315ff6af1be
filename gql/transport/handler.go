package transport

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/gql/jsonvalue"
	"github.com/corehq/core/server/door"
)

// Handler is the /graphql door: GraphQL over HTTP, POST and GET, for the
// instance the request's core-domain names. door.Resolve, the route's
// middleware, has opened the request (instance, caller, schema); serve
// reads the request, runs it on the engine and writes the answer.
type Handler struct {
	engine *gql.Engine
}

// New returns the /graphql door of engine.
func New(engine *gql.Engine) *Handler { return &Handler{engine: engine} }

// Register mounts POST and GET /graphql on e, behind the instances' CORS
// policy and door.Resolve, and OPTIONS for preflights (no token); a GET
// that upgrades to a WebSocket runs subscriptions (websocket.go).
func (h *Handler) Register(e *echo.Echo) {
	cors, preflight := door.CORS(h.engine, "GET, POST, OPTIONS")
	resolve := door.Resolve(h.engine)
	e.POST("/graphql", h.serve, cors, resolve)
	get := cors(resolve(h.serve))
	e.GET("/graphql", func(c echo.Context) error {
		// A WebSocket names its instance and caller in its
		// connection_init (websocket.go).
		if isWebSocket(c.Request()) {
			return h.serveWebSocket(c)
		}
		return get(c)
	})
	e.OPTIONS("/graphql", preflight)
}

// serve answers one GraphQL-over-HTTP request: POST with a JSON body
// {query, operationName, variables}, or GET with those as query
// parameters (variables as JSON text; GET runs queries only).
func (h *Handler) serve(c echo.Context) error {
	req, err := readRequest(c.Request())
	if err != nil {
		return door.WriteError(c, err)
	}
	ctx := c.Request().Context()
	env, ok := door.EnvFrom(ctx)
	if !ok {
		return door.WriteError(c, errcode.New(errcode.Internal, "internal error"))
	}
	if wantsEventStream(c.Request()) && gql.IsSubscription(env.Schema, req) {
		return h.serveSSE(c, env, req)
	}
	if c.Request().Method == http.MethodGet && gql.IsMutation(env.Schema, req) {
		return door.WriteError(c, errcode.New(errcode.BadRequest, "mutations need POST"))
	}
	res := h.engine.Run(ctx, env, req)
	defer res.Release()
	if res.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(res.RetryAfter))
	}
	return door.WriteResult(c, res)
}

// maxJSONDepth bounds the nesting of a request body and of its variables:
// far more than any schema's inputs need.
const maxJSONDepth = 64

// readRequest decodes a GraphQL request from the body (POST) or the query
// string (GET). A body is one JSON object, decoded strictly (jsonvalue):
// a duplicate key or data after the object is BAD_REQUEST, as is a member
// of the wrong type.
func readRequest(r *http.Request) (gql.Request, error) {
	var req gql.Request
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		req.Query = q.Get("query")
		req.OperationName = q.Get("operationName")
		if v := q.Get("variables"); v != "" {
			x, err := jsonvalue.Decode([]byte(v), maxJSONDepth)
			if err != nil {
				return req, errcode.New(errcode.BadRequest, "variables is not valid JSON: %s", err)
			}
			vars, ok := variablesOf(x)
			if !ok {
				return req, errcode.New(errcode.BadRequest, "variables must be a JSON object, not %s", jsonvalue.Kind(x))
			}
			req.Variables = vars
		}
	} else {
		b, err := errcode.ReadBody(r, 0)
		if err != nil {
			return req, err
		}
		x, err := jsonvalue.Decode(b, maxJSONDepth)
		if err != nil {
			return req, errcode.New(errcode.BadRequest, "the body is not a GraphQL request: %s", err)
		}
		m, ok := x.(map[string]any)
		if !ok {
			return req, errcode.New(errcode.BadRequest, "the body is not a GraphQL request: it must be a JSON object, not %s", jsonvalue.Kind(x))
		}
		if req, err = requestOf(m); err != nil {
			return req, err
		}
	}
	if req.Query == "" {
		return req, errcode.New(errcode.BadRequest, "query is required")
	}
	return req, nil
}

// requestOf takes a Request from the members of a decoded body: query a
// string, operationName a string or null, variables an object or null.
// Other members (extensions) are ignored; a null query is a missing one.
func requestOf(m map[string]any) (gql.Request, error) {
	var req gql.Request
	switch q := m["query"].(type) {
	case nil:
	case string:
		req.Query = q
	default:
		return req, errcode.New(errcode.BadRequest, "query must be a string, not %s", jsonvalue.Kind(q))
	}
	switch op := m["operationName"].(type) {
	case nil:
	case string:
		req.OperationName = op
	default:
		return req, errcode.New(errcode.BadRequest, "operationName must be a string or null, not %s", jsonvalue.Kind(op))
	}
	vars, ok := variablesOf(m["variables"])
	if !ok {
		return req, errcode.New(errcode.BadRequest, "variables must be a JSON object, not %s", jsonvalue.Kind(m["variables"]))
	}
	req.Variables = vars
	return req, nil
}

// variablesOf takes the variables of a request from their decoded JSON:
// an object, or null (or absent) for none; ok is false for anything else.
func variablesOf(x any) (vars map[string]any, ok bool) {
	switch v := x.(type) {
	case nil:
		return nil, true
	case map[string]any:
		return v, true
	}
	return nil, false
}
