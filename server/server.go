package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/corehq/core/admin"
	"github.com/corehq/core/console"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/metrics"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/rest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
	"github.com/corehq/core/webhook"
)

// Server is cored's HTTP server.
type Server struct {
	cfg    Config
	log    *zap.Logger
	st     store.Store
	reg    *tenant.Directory
	engine *gql.Engine
	opts   options
	echo   *echo.Echo
	http   *http.Server
}

// Option adds to what New builds.
type Option func(*options)

type options struct {
	routes       []func(*echo.Echo)
	fnPackages   admin.FunctionStore
	fnLogs       admin.FunctionLog
	hasFunctions bool
	images       *oci.Registry
	metrics      *metrics.Metrics
}

// WithMetrics counts and times every request (metrics.Middleware); the
// figures are served elsewhere (cored serve --metrics-addr), never on
// this server's listener.
func WithMetrics(m *metrics.Metrics) Option {
	return func(o *options) { o.metrics = m }
}

// WithImages serves the container registry of function images at /v2/
// and mounts its admin routes (/admin/v1/apps/{app}/registry…,
// /admin/v1/registry/gc). Its requests skip the body limit: the registry
// bounds them itself.
func WithImages(r *oci.Registry) Option {
	return func(o *options) { o.images = r }
}

// WithFunctions mounts the admin API's function routes (publishing
// function versions, reading function logs) over the function store and
// log the runtime uses.
func WithFunctions(pk admin.FunctionStore, logs admin.FunctionLog) Option {
	return func(o *options) { o.fnPackages, o.fnLogs, o.hasFunctions = pk, logs, true }
}

// WithRoutes mounts more routes after the built-in ones; they run behind
// the same middleware (tests use it for routes that panic or block).
func WithRoutes(mount func(e *echo.Echo)) Option {
	return func(o *options) { o.routes = append(o.routes, mount) }
}

// New builds the server over a store (for its readiness probe), the
// directory of instances (for the admin API) and the engine every data door
// runs on (gql.NewEngine).
func New(cfg Config, logger *zap.Logger, st store.Store, reg *tenant.Directory, engine *gql.Engine, opts ...Option) *Server {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{cfg: cfg, log: logger, st: st, reg: reg, engine: engine, opts: o}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The client address is the connection's, or what a trusted proxy in
	// front says it is (clientip.go): login throttling keys on it.
	e.IPExtractor = clientIP(cfg.TrustedProxies)
	e.HTTPErrorHandler = s.handleError
	// Outermost first: the request id is known to the log line, the log
	// line sees the status a recovered panic answers, and the body limit
	// applies to every handler.
	e.Use(requestID, s.logRequests)
	if o.metrics != nil {
		e.Use(o.metrics.Middleware)
	}
	e.Use(s.recoverPanics, s.limitBody(cfg.BodyLimit), s.deadline(cfg.RequestTimeout))
	s.echo = e
	s.routes()
	for _, mount := range o.routes {
		mount(e)
	}
	// net/http reports connection-level trouble (TLS, hijack, panics it
	// recovers itself) through its ErrorLog: keep it in the JSON log.
	errorLog, _ := zap.NewStdLogAt(logger.Named("http"), zap.WarnLevel) // fails only for an invalid level
	s.http = &http.Server{
		Handler:           e,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          errorLog,
	}
	// Subscriptions never end by themselves: a shutdown ends them, so
	// that the drain waits only for ordinary requests.
	s.http.RegisterOnShutdown(engine.CloseStreams)
	return s
}

// routes mounts every door of the service.
func (s *Server) routes() {
	e := s.echo
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)

	// Every admin route is behind the admin token: admin.Routes mounts
	// nothing without it.
	adminAPI := admin.Mount(e, s.cfg.AdminTokenHash)
	admin.New(s.reg).Register(adminAPI)
	admin.NewUsage(s.reg, s.engine.Meter()).Register(adminAPI)
	if s.opts.hasFunctions {
		admin.NewFunctions(s.reg, s.opts.fnPackages, s.opts.fnLogs).Register(adminAPI)
	}
	if r := s.opts.images; r != nil {
		admin.NewOCI(r.Tokens(), r, r).Register(adminAPI)
		r.Register(e)
	}

	// The data doors, each a thin front of the engine: /graphql and
	// /rest/v1 name their instance in core-domain (the engine's Resolve
	// opens the request; REST's OPTIONS needs no instance);
	// /webhook/{domain}/{name} names it in the path.
	gql.NewHandler(s.engine).Register(e)
	rest.New(s.engine).Register(e.Group("/rest/v1"))
	wcfg := webhook.DefaultConfig()
	wcfg.BodyLimit = s.cfg.BodyLimit
	webhook.New(wcfg, s.engine).Register(e)

	// The web console: static files only, the same to everyone; the page
	// calls the doors above with the tokens the person gives it.
	console.New().Register(e)
}

// deadline gives every request but the image registry's a context that
// ends after d (none when d is 0); a request that ran past it answers 504
// TIMEOUT unless its answer was already on its way. Subscriptions are
// not bounded by it (gql.WithStreamContext).
func (s *Server) deadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if d <= 0 || s.isRegistry(c.Request().URL.Path) {
				return next(c)
			}
			dctx := withDeadline(c.Request().Context(), time.Now().Add(d))
			defer dctx.release()
			// An event stream stays open as long as its client keeps it
			// (a WebSocket runs on its own context once upgraded).
			ctx := gql.WithStreamContext(dctx, c.Request().Context())
			c.SetRequest(c.Request().WithContext(ctx))
			err := next(c)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && !c.Response().Committed {
				return errcode.Wrap(errcode.Timeout, err, "the request ran past the server's request time-out of %s", d)
			}
			return err
		}
	}
}

// isRegistry reports whether path is the image registry's (/v2/).
func (s *Server) isRegistry(p string) bool {
	return s.opts.images != nil && (p == "/v2" || strings.HasPrefix(p, "/v2/"))
}

// limitBody is the body limit of every request but the image registry's
// (/v2/), whose layers are larger than any API call.
func (s *Server) limitBody(limit int64) echo.MiddlewareFunc {
	limited := limitBody(limit)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		withLimit := limited(next)
		return func(c echo.Context) error {
			if s.isRegistry(c.Request().URL.Path) {
				return next(c)
			}
			return withLimit(c)
		}
	}
}

// Handler returns the routes as an http.Handler, for in-process use.
func (s *Server) Handler() http.Handler { return s.echo }

// Start listens on Config.Addr and serves like Serve.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is done, then stops accepting connections
// and waits up to Config.ShutdownTimeout for the requests in flight to
// finish. It returns nil after a complete drain. A Server serves once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.http.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		s.http.Close()
		return fmt.Errorf("server: draining: %w", err)
	}
	return nil
}
