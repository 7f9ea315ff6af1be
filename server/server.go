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
	"github.com/corehq/core/email"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/files"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/gql/transport"
	"github.com/corehq/core/metrics"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/rest"
	"github.com/corehq/core/server/door"
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
	// console and consoleHTTP serve the console's own listener when
	// Config.ConsoleAddr is set; nil otherwise.
	console     *echo.Echo
	consoleHTTP *http.Server
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
	backups      admin.BackupDir
	hookTester   admin.HookTester
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

// WithHookTester mounts the admin API's route that posts a test event
// to an event hook (the hooks service).
func WithHookTester(t admin.HookTester) Option {
	return func(o *options) { o.hookTester = t }
}

// WithBackups mounts the admin API's backup routes (/admin/v1/backups…)
// over the folder of kept backups.
func WithBackups(dir admin.BackupDir) Option {
	return func(o *options) { o.backups = dir }
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
	s.echo = s.newEcho(o.metrics)
	s.routes()
	for _, mount := range o.routes {
		mount(s.echo)
	}
	s.http = s.newHTTP(s.echo)
	if cfg.ConsoleAddr != "" {
		s.console = s.newEcho(o.metrics)
		s.consoleRoutes()
		s.consoleHTTP = s.newHTTP(s.console)
		s.consoleHTTP.RegisterOnShutdown(engine.CloseStreams)
	}
	// Subscriptions never end by themselves: a shutdown ends them, so
	// that the drain waits only for ordinary requests.
	s.http.RegisterOnShutdown(engine.CloseStreams)
	return s
}

// newEcho returns an echo with the server's error handler, client
// address and middleware, and no routes.
func (s *Server) newEcho(m *metrics.Metrics) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The client address is the connection's, or what a trusted proxy in
	// front says it is (clientip.go): login throttling keys on it.
	e.IPExtractor = clientIP(s.cfg.TrustedProxies)
	e.HTTPErrorHandler = s.handleError
	// Outermost first: the request id is known to the log line, the log
	// line sees the status a recovered panic answers, and the body limit
	// applies to every handler.
	e.Use(requestID, s.logRequests())
	if m != nil {
		e.Use(m.Middleware)
	}
	e.Use(s.recoverPanics, s.limitBody(s.cfg.BodyLimit), s.deadline(s.cfg.RequestTimeout))
	return e
}

// newHTTP returns the net/http server of h, with the configured bounds.
func (s *Server) newHTTP(h http.Handler) *http.Server {
	// net/http reports connection-level trouble (TLS, hijack, panics it
	// recovers itself) through its ErrorLog: keep it in the JSON log.
	errorLog, _ := zap.NewStdLogAt(s.log.Named("http"), zap.WarnLevel) // fails only for an invalid level
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          errorLog,
	}
}

// routes mounts every door of the service.
func (s *Server) routes() {
	e := s.echo
	s.operatorRoutes(e)
	if r := s.opts.images; r != nil {
		r.Register(e)
	}

	// The data doors, each a thin front of the engine: /graphql and
	// /rest/v1 name their instance in core-domain (door.Resolve opens the
	// request; REST's OPTIONS needs no instance);
	// /webhook/{domain}/{name} names it in the path.
	transport.New(s.engine).Register(e)
	rest.New(s.engine).Register(e.Group("/rest/v1"))
	wcfg := webhook.DefaultConfig()
	wcfg.BodyLimit = s.cfg.BodyLimit
	webhook.New(wcfg, s.engine).Register(e)
	// /email/reset/{domain}: Hypi's e-mail routes, the instance in the path.
	email.New(s.engine).Register(e)
	// Uploads name their instance in core-domain, downloads in the path.
	files.New(s.engine).Register(e)

	// The web console: static files only, the same to everyone; the page
	// calls the doors above with the tokens the person gives it. On a
	// listener of its own when ConsoleAddr is set (consoleRoutes).
	if s.cfg.ConsoleAddr == "" {
		console.New().Register(e)
	}
}

// operatorRoutes mounts the health probes and the admin API.
func (s *Server) operatorRoutes(e *echo.Echo) {
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)

	// Every admin route is behind the admin token: admin.Routes mounts
	// nothing without it.
	adminAPI := admin.Mount(e, s.cfg.AdminTokenHash)
	admin.New(s.reg).Register(adminAPI)
	admin.NewUsage(s.reg, s.engine.Meter()).Register(adminAPI)
	admin.NewSessions(s.reg, s.engine.Accounts()).Register(adminAPI)
	admin.NewTransfer(s.reg, s.st).Register(adminAPI)
	if o := s.engine.Outbox(); o != nil {
		admin.NewMail(s.reg, o).Register(adminAPI)
	}
	admin.NewHooks(s.reg, s.st, s.opts.hookTester).Register(adminAPI)
	if s.opts.hasFunctions {
		admin.NewFunctions(s.reg, s.opts.fnPackages, s.opts.fnLogs).Register(adminAPI)
	}
	if s.opts.backups != nil {
		admin.NewBackups(s.opts.backups).Register(adminAPI)
	}
	if r := s.opts.images; r != nil {
		admin.NewOCI(r.Tokens(), r, r).Register(adminAPI)
		admin.NewAppUsage(s.reg, r).Register(adminAPI)
	}
}

// consoleRoutes mounts the console's own listener: the console, the
// admin API and /graphql that its pages call (so that they stay on one
// origin, with no CORS), and the health probes. Nothing of a tenant's
// content is served there: no webhooks, no REST, no image registry. The
// console's "send test" of a webhook is answered with a 404 saying where
// webhooks are.
func (s *Server) consoleRoutes() {
	e := s.console
	s.operatorRoutes(e)
	transport.New(s.engine).Register(e)
	console.New().Register(e)
	e.Any("/webhook/*", func(c echo.Context) error {
		return errcode.New(errcode.NotFound, "webhooks are served on the service's main listener, not on the console's")
	})
}

// deadline gives every request but the image registry's a context that
// ends after d (none when d is 0); a request that ran past it answers 504
// TIMEOUT unless its answer was already on its way. Subscriptions are
// not bounded by it (door.WithStreamContext).
func (s *Server) deadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if d <= 0 || s.isRegistry(c.Request().URL.Path) || isFiles(c.Request().URL.Path) {
				return next(c)
			}
			dctx := withDeadline(c.Request().Context(), time.Now().Add(d))
			defer dctx.release()
			// An event stream stays open as long as its client keeps it
			// (a WebSocket runs on its own context once upgraded).
			ctx := door.WithStreamContext(dctx, c.Request().Context())
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

// isImport reports whether path is an instance's import
// (/admin/v1/instances/{domain}/import).
func isImport(p string) bool {
	return strings.HasPrefix(p, "/admin/v1/instances/") && strings.HasSuffix(p, "/import") && strings.Count(p, "/") == 5
}

// isFiles reports whether path is the files door's (files.Routes), whose
// uploads the instances' maxFileSize bounds.
func isFiles(p string) bool {
	for _, r := range files.Routes {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// limitBody is the body limit of every request but the image registry's
// (/v2/), whose layers are larger than any API call, an instance's
// import (admin only), which streams an export of any size, and the
// files door's uploads, which the instances' maxFileSize bounds.
func (s *Server) limitBody(limit int64) echo.MiddlewareFunc {
	limited := limitBody(limit)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		withLimit := limited(next)
		return func(c echo.Context) error {
			if p := c.Request().URL.Path; s.isRegistry(p) || isImport(p) || isFiles(p) {
				return next(c)
			}
			return withLimit(c)
		}
	}
}

// Handler returns the routes as an http.Handler, for in-process use.
func (s *Server) Handler() http.Handler { return s.echo }

// ConsoleHandler returns the routes of the console's own listener, nil
// unless Config.ConsoleAddr is set.
func (s *Server) ConsoleHandler() http.Handler {
	if s.console == nil {
		return nil
	}
	return s.console
}

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
	return s.serve(ctx, s.http, ln)
}

// ServeConsole serves the console's own listener (Config.ConsoleAddr) on
// ln as Serve does; without a ConsoleAddr it is an error.
func (s *Server) ServeConsole(ctx context.Context, ln net.Listener) error {
	if s.consoleHTTP == nil {
		return errors.New("server: the console has no listener of its own (Config.ConsoleAddr is empty)")
	}
	return s.serve(ctx, s.consoleHTTP, ln)
}

func (s *Server) serve(ctx context.Context, hs *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		hs.Close()
		return fmt.Errorf("server: draining: %w", err)
	}
	return nil
}
