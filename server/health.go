package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
)

// healthz answers 200 while the process serves HTTP.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 once the instances are loaded and while the store
// answers; 503 UNAVAILABLE otherwise.
func (s *Server) readyz(c echo.Context) error {
	if !s.reg.Loaded() {
		return errcode.New(errcode.Unavailable, "not ready: the instances are not loaded yet")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.PingTimeout)
	defer cancel()
	if err := s.st.Ping(ctx); err != nil {
		return errcode.Wrap(errcode.Unavailable, err, "not ready: the store does not answer")
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}
