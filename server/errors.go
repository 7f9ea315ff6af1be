package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/corehq/core/errcode"
)

// handleError is echo's HTTPErrorHandler: every failure, echo's own
// included, answers the errcode envelope.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, body := envelope(err, c.Request())
	if len(body.Errors) > 0 {
		if secs, ok := body.Errors[0].Extensions["retryAfter"]; ok {
			c.Response().Header().Set("Retry-After", fmt.Sprint(secs))
		}
	}
	var werr error
	if c.Request().Method == http.MethodHead {
		werr = c.NoContent(status)
	} else {
		werr = c.JSON(status, body)
	}
	if werr != nil {
		s.log.Debug("writing an error answer failed", zap.Error(werr))
	}
}

// envelope maps an error to its status and envelope. An over-limit body
// wins over whatever a handler made of it; errors without a code are
// INTERNAL with a generic message.
func envelope(err error, req *http.Request) (int, errcode.Envelope) {
	var mbe *http.MaxBytesError
	var ce *errcode.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &mbe):
		return errcode.Body(errcode.BodyTooLarge(mbe.Limit))
	case errors.As(err, &ce):
		return errcode.Body(ce)
	case errors.As(err, &he):
		return httpError(he, req)
	default:
		return errcode.Body(err)
	}
}

// httpError renders echo's own errors (no route, wrong method, …), keeping
// their status.
func httpError(he *echo.HTTPError, req *http.Request) (int, errcode.Envelope) {
	var e *errcode.Error
	switch he.Code {
	case http.StatusNotFound:
		e = errcode.New(errcode.NotFound, "no such path: %s %s", req.Method, req.URL.Path)
	case http.StatusMethodNotAllowed:
		e = errcode.New(errcode.MethodNotAllowed, "method %s is not allowed on %s", req.Method, req.URL.Path)
	case http.StatusRequestEntityTooLarge:
		e = errcode.New(errcode.TooLarge, "request body is too large")
	case http.StatusUnauthorized:
		e = errcode.New(errcode.Unauthenticated, "%s", message(he))
	case http.StatusServiceUnavailable:
		e = errcode.New(errcode.Unavailable, "%s", message(he))
	default:
		if he.Code >= 400 && he.Code < 500 {
			e = errcode.New(errcode.BadRequest, "%s", message(he))
		} else {
			e = errcode.Wrap(errcode.Internal, he, "internal error")
		}
	}
	_, body := errcode.Body(e)
	return he.Code, body
}

func message(he *echo.HTTPError) string {
	if m, ok := he.Message.(string); ok && m != "" {
		return m
	}
	return fmt.Sprintf("%d %s", he.Code, http.StatusText(he.Code))
}
