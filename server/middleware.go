package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// maxRequestIDLen bounds a request id taken from the client.
const maxRequestIDLen = 128

// requestID takes the request id from X-Request-Id when the client sent a
// sane one (1 to 128 of [A-Za-z0-9._:-]), else makes one (a ULID), and
// echoes it in the response.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !validRequestID(id) {
			id = store.NewID()
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// logRequests writes one line per request: request id, method, path
// (never the query string), client address (clientip.go), status, latency, bytes written, the instance's
// domain once known, and the cause of a 5xx. Headers and bodies are never
// logged: they carry tokens and passwords. The line has no caller: it is
// always this function, and finding it costs a stack walk per request.
//
// echo applies middleware to the handler anew on every request: the
// logger is made here, once, not in the middleware.
func (s *Server) logRequests() echo.MiddlewareFunc {
	// No stack either: a 5xx line carries its cause, and the stack of the
	// middleware that logs it says nothing.
	log := s.log.WithOptions(zap.WithCaller(false), zap.AddStacktrace(zap.LevelEnablerFunc(func(zapcore.Level) bool { return false })))
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return logRequest(log, next)
	}
}

// logRequest is next, logged to log.
func logRequest(log *zap.Logger, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err) // answer now, so that the status is known
		}
		req, res := c.Request(), c.Response()
		fields := make([]zap.Field, 0, 8)
		fields = append(fields,
			zap.String("request_id", res.Header().Get(echo.HeaderXRequestID)),
			zap.String("method", req.Method),
			zap.String("path", req.URL.Path),
			zap.String("client", c.RealIP()),
			zap.Int("status", res.Status),
			zap.Duration("latency", time.Since(start)),
			zap.Int64("bytes", res.Size),
		)
		if inst := tenant.FromContext(req.Context()); inst != nil {
			fields = append(fields, zap.String("domain", inst.Domain))
		}
		if res.Status >= http.StatusInternalServerError {
			if err != nil {
				fields = append(fields, zap.NamedError("error", cause(err)))
			}
			log.Error("request", fields...)
		} else {
			log.Info("request", fields...)
		}
		return nil
	}
}

// recoverPanics turns a panic of a handler into a 500 INTERNAL answer and
// logs it with its stack. http.ErrAbortHandler is let through: it is how a
// handler asks net/http to drop the connection.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.log.Error("panic",
				zap.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
				zap.String("method", c.Request().Method),
				zap.String("path", c.Request().URL.Path),
				zap.Any("panic", r),
				zap.Stack("stack"),
			)
			err = errcode.Wrap(errcode.Internal, fmt.Errorf("panic: %v", r), "internal error")
		}()
		return next(c)
	}
}

// limitBody refuses a request whose declared length exceeds limit before
// reading anything, and caps the body of the others with
// http.MaxBytesReader, whose *http.MaxBytesError the error handler answers
// 413 TOO_LARGE.
func limitBody(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.ContentLength > limit {
				return errcode.BodyTooLarge(limit)
			}
			// The underlying writer, so that net/http learns the body was too
			// large and closes the connection after the answer.
			req.Body = http.MaxBytesReader(c.Response().Writer, req.Body, limit)
			return next(c)
		}
	}
}

// cause is what a log should say about err: the hidden cause of a coded
// error (its message is the generic one the client saw), else err.
func cause(err error) error {
	var ce *errcode.Error
	if errors.As(err, &ce) && ce.Err != nil {
		return ce.Err
	}
	return err
}
