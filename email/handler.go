package email

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/door"
	"github.com/corehq/core/tenant"
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
	e.GET("/email/verify/:domain", h.verify)
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
	if _, ok, err := h.run(c, inst, resetDoc, map[string]any{"code": *b.Code, "password": *b.Password}); !ok {
		return err
	}
	return c.JSON(http.StatusOK, map[string]bool{"reset": true})
}

const verifyDoc = `mutation($token: String!) { verifyEmail(token: $token) }`

// verify follows a verification link (?token=): the address is verified,
// then 303 to the link's redirectTo (the engine answers it only while it
// is on one of the instance's origins), or 200 {"verified": true}.
func (h *Handler) verify(c echo.Context) error {
	inst, err := h.engine.Instances().Instance(c.Param("domain"))
	if err != nil {
		return door.WriteError(c, err)
	}
	data, ok, err := h.run(c, inst, verifyDoc, map[string]any{"token": c.QueryParam("token")})
	if !ok {
		return err
	}
	if to, _ := data["verifyEmail"].(string); to != "" {
		return c.Redirect(http.StatusSeeOther, to)
	}
	return c.JSON(http.StatusOK, map[string]bool{"verified": true})
}

// run runs a document for inst as an anonymous caller and returns its
// data (ok). On an error it has answered the error envelope with the
// error's status (and Retry-After): ok is false, err the write's.
func (h *Handler) run(c echo.Context, inst *tenant.Instance, doc string, vars map[string]any) (data map[string]any, ok bool, err error) {
	env, err := h.engine.Open(c.Request().Context(), inst, "", c.RealIP())
	if err != nil {
		return nil, false, door.WriteError(c, err)
	}
	res := h.engine.Do(c.Request().Context(), env, gql.Request{Query: doc, Variables: vars})
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		code, _ := e.Extensions["code"].(string)
		if secs, ok := e.Extensions["retryAfter"]; ok {
			c.Response().Header().Set("Retry-After", jsonNumber(secs))
		}
		return nil, false, c.JSON(errcode.Code(code).Status(), errcode.Envelope{Errors: []errcode.Item{{Message: e.Message, Extensions: e.Extensions}}})
	}
	data, _ = res.Value().(map[string]any)
	return data, true, nil
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
