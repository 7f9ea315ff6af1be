package webhook

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/untrusted"
)

// Config bounds webhook calls.
type Config struct {
	// BodyLimit is the largest request body passed on.
	BodyLimit int64
	// TokenLifetime is how long the session token issued for a call's
	// `as` account lasts.
	TokenLifetime time.Duration
}

// DefaultConfig returns a 1 MiB body limit and 5-minute call tokens.
func DefaultConfig() Config {
	return Config{BodyLimit: 1 << 20, TokenLifetime: 5 * time.Minute}
}

// Handler serves /webhook/{domain}/{name}: it hands the raw request to
// the engine (gql.Engine.OpenWebhook finds the webhook and the account it
// runs as) and writes what the function answers.
type Handler struct {
	cfg    Config
	engine *gql.Engine
}

// New returns the webhook door of engine.
func New(cfg Config, engine *gql.Engine) *Handler {
	return &Handler{cfg: cfg, engine: engine}
}

// Register mounts the receiver for every method.
func (h *Handler) Register(e *echo.Echo) {
	e.Any("/webhook/:domain/:name", h.serve)
}

// serve answers one call. Failures are returned, not written, so that the
// request's log line carries their cause.
func (h *Handler) serve(c echo.Context) error {
	// A browser fetching a service worker's script says so: a webhook is
	// never one (untrusted.CheckRequest), and its function does not run.
	if err := untrusted.CheckRequest(c.Request()); err != nil {
		return err
	}
	if err := checkEncoding(c.Request()); err != nil {
		return err
	}
	ctx := c.Request().Context()
	env, req, err := h.engine.OpenWebhook(ctx, c.Param("domain"), c.Param("name"), c.RealIP(), h.cfg.TokenLifetime)
	if err != nil {
		return err
	}
	body, err := errcode.ReadBody(c.Request(), h.cfg.BodyLimit)
	if err != nil {
		return err
	}
	req.Variables = map[string]any{"payload": payload(c.Request(), body)}
	out, err := h.engine.RunWebhook(ctx, env, req)
	if err != nil {
		return err
	}
	if err := writeResponse(c, out); err != nil {
		return errcode.Wrap(errcode.BadGateway, err, "%s", err)
	}
	return nil
}
