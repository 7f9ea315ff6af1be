package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
)

// decode reads the request body into v, which must be a pointer to a
// struct. The body must be exactly one JSON object whose fields v knows;
// anything else is BAD_REQUEST naming the problem, and a body over the
// server's limit is TOO_LARGE.
func decode(c echo.Context, v any) error {
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return errcode.Wrap(errcode.TooLarge, err, "request body is larger than %d bytes", mbe.Limit)
		}
		return errcode.Wrap(errcode.BadRequest, err, "reading the request body failed")
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
		return errcode.Wrap(errcode.BadRequest, err, "%s", describe(err))
	}
	if rest := bytes.TrimSpace(trimmed[dec.InputOffset():]); len(rest) > 0 {
		return errcode.New(errcode.BadRequest, "request body must hold one JSON object; found more after it")
	}
	return nil
}

// describe turns a decoding error into a message for the client.
func describe(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("request body must be a JSON object, not %s", typ.Value)
		}
		return fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: unexpected end of input"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.TrimPrefix(err.Error(), "json: ")
	default:
		return "malformed JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
}

// jsonKind names a Go type the way a JSON client thinks of it.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "a number"
	}
}
