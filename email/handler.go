package email

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/door"
)

// Handler serves /email/….
type Handler struct {
	engine *gql.Engine
}

// New returns the /email door in front of engine.
func New(engine *gql.Engine) *Handler { return &Handler{engine: engine} }

// Register mounts the routes on e.
func (h *Handler) Register(e *echo.Echo) {
	e.POST("/email/reset/:domain", h.reset)
}

const resetDoc = `mutation($code: String!, $password: String!) { resetPassword(code: $code, password: $password) }`

// reset answers 200 {"reset": true}, or the error envelope with the
// error's status (400 for a wrong, used or expired code, 429 with
// Retry-After when throttled).
func (h *Handler) reset(c echo.Context) error {
	inst, err := h.engine.Instances().Instance(c.Param("domain"))
	if err != nil {
		return door.WriteError(c, err)
	}
	raw, err := errcode.ReadBody(c.Request(), 0)
	if err != nil {
		return door.WriteError(c, err)
	}
	var b struct {
		Code     *string `json:"code"`
		Password *string `json:"password"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return door.WriteError(c, errcode.New(errcode.BadRequest, "%s", errcode.DescribeJSON(err)))
	}
	if b.Code == nil || b.Password == nil {
		return door.WriteError(c, errcode.New(errcode.BadRequest, `the body is {"code": "<the code sent by mail>", "password": "<the new password>"}`))
	}
	env, err := h.engine.Open(c.Request().Context(), inst, "", c.RealIP())
	if err != nil {
		return door.WriteError(c, err)
	}
	res := h.engine.Do(c.Request().Context(), env, gql.Request{Query: resetDoc, Variables: map[string]any{"code": *b.Code, "password": *b.Password}})
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		code, _ := e.Extensions["code"].(string)
		status := errcode.Code(code).Status()
		if secs, ok := e.Extensions["retryAfter"]; ok {
			c.Response().Header().Set("Retry-After", jsonNumber(secs))
		}
		return c.JSON(status, errcode.Envelope{Errors: []errcode.Item{{Message: e.Message, Extensions: e.Extensions}}})
	}
	return c.JSON(http.StatusOK, map[string]bool{"reset": true})
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
