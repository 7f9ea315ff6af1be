package gql

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/graphql-go/graphql/language/ast"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/gql/jsonvalue"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Handler serves POST and GET /graphql for the instance the request's
// core-domain names (resolved by tenant's middleware, the caller by
// auth's, before it).
type Handler struct {
	store     store.Store
	accounts  *auth.Accounts
	log       *zap.Logger
	functions fn.Runtime
}

// HandlerOption configures a Handler.
type HandlerOption func(*Handler)

// WithFunctions lets the schemas' @fn fields run on rt.
func WithFunctions(rt fn.Runtime) HandlerOption {
	return func(h *Handler) { h.functions = rt }
}

// NewHandler returns the /graphql handler.
func NewHandler(st store.Store, accounts *auth.Accounts, log *zap.Logger, opts ...HandlerOption) *Handler {
	h := &Handler{store: st, accounts: accounts, log: log}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Env returns the environment a request runs in: its instance, the
// release it loaded (once: the request finishes on it), its caller and
// client address. Every door that runs GraphQL builds its Env here.
func (h *Handler) Env(c echo.Context) Env {
	ctx := c.Request().Context()
	return h.EnvFor(tenant.FromContext(ctx), auth.FromContext(ctx), auth.BearerToken(c.Request().Header.Get("authorization")), c.RealIP())
}

// EnvFor returns the environment of a request for inst by a caller who
// sent token, loading the instance's release once.
func (h *Handler) EnvFor(inst *tenant.Instance, p auth.Principal, token, clientIP string) Env {
	return Env{Store: h.store, Accounts: h.accounts, Instance: inst, Release: inst.Release(),
		Principal: p, ClientIP: clientIP, Token: token, Functions: h.functions}
}

// Log returns the handler's logger.
func (h *Handler) Log() *zap.Logger { return h.log }

// Serve answers one GraphQL-over-HTTP request: POST with a JSON body
// {query, operationName, variables}, or GET with those as query
// parameters (variables as JSON text; GET runs queries only).
func (h *Handler) Serve(c echo.Context) error {
	req, err := readRequest(c.Request())
	if err != nil {
		return errcode.Write(c, err)
	}
	ctx := c.Request().Context()
	env := h.Env(c)
	compiled, err := env.Release.Compiled()
	if err != nil {
		h.log.Error("compiling the release failed", zap.String("domain", env.Instance.Domain), zap.Error(err))
		return errcode.Write(c, errcode.Wrap(errcode.Internal, err, "internal error"))
	}
	s, ok := compiled.(*Schema)
	if !ok {
		return errcode.Write(c, errcode.New(errcode.Internal, "internal error"))
	}
	if c.Request().Method == http.MethodGet && isMutation(s, req) {
		return errcode.Write(c, errcode.New(errcode.BadRequest, "mutations need POST"))
	}
	res := s.Run(ctx, env, h.log, req)
	defer res.Release()
	if res.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(res.RetryAfter))
	}
	return writeResult(c, res)
}

// maxJSONDepth bounds the nesting of a request body and of its variables:
// far more than any schema's inputs need.
const maxJSONDepth = 64

// readRequest decodes a GraphQL request from the body (POST) or the query
// string (GET). A body is one JSON object, decoded strictly (jsonvalue):
// a duplicate key or data after the object is BAD_REQUEST, as is a member
// of the wrong type.
func readRequest(r *http.Request) (Request, error) {
	var req Request
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
		b, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return req, errcode.New(errcode.TooLarge, "the request body is larger than %d bytes", tooLarge.Limit)
			}
			return req, errcode.Wrap(errcode.BadRequest, err, "reading the request body failed")
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
func requestOf(m map[string]any) (Request, error) {
	var req Request
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

// isMutation reports whether the operation a request runs is a mutation.
func isMutation(s *Schema, req Request) bool {
	d := s.document(req.Query)
	if d.ast == nil {
		return false
	}
	for _, def := range d.ast.Definitions {
		op, ok := def.(*ast.OperationDefinition)
		if !ok {
			continue
		}
		if req.OperationName == "" || (op.Name != nil && op.Name.Value == req.OperationName) {
			return op.Operation == ast.OperationTypeMutation
		}
	}
	return false
}
