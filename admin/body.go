package admin

import (
	"bytes"
	"encoding/json"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
)

// decode reads the request body into v, which must be a pointer to a
// struct. The body must be exactly one JSON object whose fields v knows;
// anything else is BAD_REQUEST naming the problem, and a body over the
// server's limit is TOO_LARGE.
func decode(c echo.Context, v any) error {
	b, err := errcode.ReadBody(c.Request(), 0)
	if err != nil {
		return err
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return errcode.New(errcode.BadRequest, "request body is required: a JSON object")
	}
	if trimmed[0] != '{' {
		return errcode.New(errcode.BadRequest, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errcode.Wrap(errcode.BadRequest, err, "%s", errcode.DescribeJSON(err))
	}
	if rest := bytes.TrimSpace(trimmed[dec.InputOffset():]); len(rest) > 0 {
		return errcode.New(errcode.BadRequest, "request body must hold one JSON object; found more after it")
	}
	return nil
}
