// Package servertest starts the real cored HTTP server for end-to-end
// tests: a bolt store in a temporary directory or a MongoDB database of
// the test server (stores.go), the registry with gql's
// compiler, the gql handler and the admin API, served over loopback by
// httptest. Tests talk to it with real HTTP requests only.
//
// Packages that servertest imports (tenant, gql, admin, server, …) use it
// from external test packages (package gql_test) to avoid an import cycle.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/backup"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/hooks"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/mail"
	"github.com/corehq/core/metrics"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/server"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/tenant"
)

// AdminToken is the admin token of every test server.
const AdminToken = "servertest-admin-token"

// Env is a running test server.
type Env struct {
	t testing.TB
	// URL is the server's base URL (http://127.0.0.1:port).
	URL string
	// ConsoleURL is the base URL of the console's own listener, when
	// WithConsoleListener asked for one; empty otherwise.
	ConsoleURL string
	// Store, Directory and Server are the server's parts, for assertions
	// that HTTP cannot make.
	Store     store.Store
	Directory *tenant.Directory
	Engine    *gql.Engine
	Server    *server.Server
	// Accounts is the accounts service; tests move its clock (Shift).
	Accounts *auth.Accounts
	// Packages, Logs and Functions are the function store, the function
	// logs and the runtime.
	Packages  *fn.Packages
	Logs      *fn.Log
	Functions *fn.JS
	// Images is the function image registry served at /v2/, when
	// WithImages asked for it.
	Images *oci.Registry
	// Client is the HTTP client the helpers use.
	Client *http.Client
	// Outbox holds the mail the server sends (MailConfig's worker).
	Outbox *mail.Outbox
	// Meter counts the instances' requests and function calls, flushed
	// into the store every 2 s and when the server stops.
	Meter *tenant.Meter
	// Hooks delivers the instances' event hooks (package hooks).
	Hooks *hooks.Service

	stopOnce sync.Once
	stops    []func() // run in reverse by Stop
}

// MailConfig is how a test server sends mail: the outbox read every
// 200 ms, a failed attempt retried after 300 ms, doubling to 2 s.
func MailConfig() mail.Config {
	c := mail.DefaultConfig()
	c.Interval, c.Backoff, c.MaxBackoff, c.MaxAttempts = 200*time.Millisecond, 300*time.Millisecond, 2*time.Second, 100
	return c
}

// WithMailConfig sends mail with cfg.
func WithMailConfig(cfg mail.Config) Option {
	return func(o *options) { o.mailCfg = cfg }
}

// Option changes how Start builds the server.
type Option func(*options)

type options struct {
	mailCfg   mail.Config
	cfg       server.Config
	gqlCfg    gql.Config
	logger    *zap.Logger
	server    []server.Option
	store     store.Store   // WithStore; nil: one of the current kind (stores.go)
	syncEvery time.Duration // WithSyncInterval
	fnCfg     fn.Config
	images    *oci.Config // WithImages
	engine    fn.Runtime  // WithImages
	metrics   *metrics.Metrics
	meterNow  func() time.Time     // WithMeterClock
	accounts  func(*auth.Accounts) // WithAccounts
	keys      *keyring.Keeper      // WithKeys
	shared    bool                 // WithSharedLoginThrottle
	argon2    *auth.Argon2         // WithArgon2
	hooks     *hooks.Config        // WithHooks
	backups   string               // WithBackups
}

// WithBackups keeps the server's backups (/admin/v1/backups) in the
// folder dir, as cored serve --backup-dir does, keeping the newest 5.
func WithBackups(dir string) Option {
	return func(o *options) { o.backups = dir }
}

// WithHooks delivers event hooks with cfg. Without it a test server
// delivers with hooks.DefaultConfig but posts to loopback too (the
// receivers tests start are there); either way it takes leases on
// MongoDB as cored does.
func WithHooks(cfg hooks.Config) Option {
	return func(o *options) { o.hooks = &cfg }
}

// sharedKeys is the key ring of every test server of the process that
// names none (WithKeys): servers on one store share it, as cored
// processes share their key file.
var sharedKeys = sync.OnceValue(func() *keyring.Keeper { return keyring.Hold(keyring.Generate()) })

// WithKeys makes the server sign sessions and seal secrets with the key
// ring keys holds, instead of the one test servers share.
func WithKeys(keys *keyring.Keeper) Option {
	return func(o *options) { o.keys = keys }
}

// WithArgon2 hashes passwords with p instead of OWASP's parameters: a
// test of many logins that is not about the cost of hashing runs in
// seconds, not minutes.
func WithArgon2(p auth.Argon2) Option {
	return func(o *options) { o.argon2 = &p }
}

// WithSharedLoginThrottle counts failed logins in the store as well as in
// memory, as cored does on MongoDB (auth.SharedFailures): servers on one
// store share the counts, and a test sees the throttle's state in it.
func WithSharedLoginThrottle() Option {
	return func(o *options) { o.shared = true }
}

// WithAccounts lets a test change the accounts service before the server
// serves (the password hashing parameters, as an operator raising them).
func WithAccounts(change func(*auth.Accounts)) Option {
	return func(o *options) { o.accounts = change }
}

// WithMeterClock makes the usage meter read the time from now (a test
// moves the day of functionCallsPerDay).
func WithMeterClock(now func() time.Time) Option {
	return func(o *options) { o.meterNow = now }
}

// WithMetrics counts requests, store operations and function calls into
// m, as cored serve --metrics-addr does.
func WithMetrics(m *metrics.Metrics) Option {
	return func(o *options) { o.metrics = m }
}

// WithImages serves the function image registry at /v2/ (cored always
// does), configured by cfg, with engine as the container engine of
// non-JavaScript images (nil: none, as cored by default).
func WithImages(cfg oci.Config, engine fn.Runtime) Option {
	return func(o *options) { o.images, o.engine = &cfg, engine }
}

// WithFunctionConfig sets the function runtime's configuration (deadline,
// bounds).
func WithFunctionConfig(cfg fn.Config) Option {
	return func(o *options) { o.fnCfg = cfg }
}

// WithConfig lets a test change the server configuration (body limit, …).
func WithConfig(change func(*server.Config)) Option {
	return func(o *options) { change(&o.cfg) }
}

// WithGQLConfig sets the limits of the GraphQL layer.
func WithGQLConfig(cfg gql.Config) Option {
	return func(o *options) { o.gqlCfg = cfg }
}

// WithLogger sets the server's logger (default: warnings and errors go to
// the test log).
func WithLogger(l *zap.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithConsoleListener serves the console on a listener of its own
// (Env.ConsoleURL), as cored serve --console-addr does; the main
// listener then does not serve it.
func WithConsoleListener() Option {
	return func(o *options) { o.cfg.ConsoleAddr = "127.0.0.1:0" }
}

// WithRoutes mounts extra routes behind the server's middleware.
func WithRoutes(mount func(e *echo.Echo)) Option {
	return func(o *options) { o.server = append(o.server, server.WithRoutes(mount)) }
}

// Start starts a server; t.Cleanup stops it and closes its store (unless
// the test gave it with WithStore). Its registry follows changes made by
// other servers on the same store, as cored does.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	o := options{
		cfg:       server.DefaultConfig(),
		gqlCfg:    gql.DefaultConfig(),
		logger:    zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)),
		syncEvery: 500 * time.Millisecond,
		fnCfg:     fn.DefaultConfig(),
		mailCfg:   MailConfig(),
	}
	for _, opt := range opts {
		opt(&o)
	}
	o.cfg.AdminTokenHash = auth.HashToken(AdminToken)
	o.logger = capturing(o.logger)
	noteSecret(AdminToken)

	noteServerTest(t)
	st := o.store
	if st == nil {
		st = openStore(t)
	}
	keys := o.keys
	if keys == nil {
		keys = sharedKeys()
	}
	reg := tenant.NewDirectory(st, tenant.WithSealer(keys))
	reg.LimitFunctionMemory(o.fnCfg.MaxMemory) // as cmd/cored does
	if err := reg.Load(context.Background()); err != nil {
		t.Fatalf("servertest: loading the registry: %v", err)
	}
	// Follow changes other servers make on the same store, as cored does.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		reg.Watch(watchCtx, o.syncEvery, func(err error) { o.logger.Warn("registry refresh failed", zap.Error(err)) })
	}()
	var stops []func() // Stop runs them in reverse, before the store closes
	stops = append(stops, func() { stopWatch(); <-watched })
	accounts := auth.NewAccounts(keys)
	if o.argon2 != nil {
		accounts.SetArgon2(*o.argon2)
	}
	if o.shared {
		accounts.Throttle.Share(auth.NewSharedFailures(st, accounts.Now))
	}
	if o.accounts != nil {
		o.accounts(accounts)
	}
	packages, logs := fn.NewPackages(st, fn.DefaultPackagesConfig()), fn.NewLog(st, fn.DefaultLogConfig())
	reg.OnDelete(logs.Clear) // as cmd/cored does
	runtime, err := fn.NewJS(o.fnCfg, packages, logs)
	if err != nil {
		t.Fatalf("servertest: starting the function runtime: %v", err)
	}
	stops = append(stops, func() { // before the store closes: logs flush into it
		_ = runtime.Close()
		_ = logs.Close()
	})
	var functions fn.Runtime = runtime
	serverOpts := []server.Option{server.WithFunctions(packages, logs)}
	var imgs *oci.Registry
	if o.images != nil {
		imgs, err = oci.New(context.Background(), *o.images, st, packages, o.cfg.AdminTokenHash, keys)
		if err != nil {
			t.Fatalf("servertest: starting the image registry: %v", err)
		}
		stops = append(stops, func() { _ = imgs.Close() })
		functions = fn.NewRouter(runtime, imgs, o.engine)
		serverOpts = append(serverOpts, server.WithImages(imgs))
	}
	dataStore := st
	if o.metrics != nil {
		dataStore, functions = o.metrics.Store(st), o.metrics.Functions(functions)
		serverOpts = append(serverOpts, server.WithMetrics(o.metrics))
	}
	// The meter flushes as cored's does, and once more when the server
	// has stopped (Stop).
	meter := tenant.NewMeter(dataStore, MeterInterval)
	if o.meterNow != nil {
		meter.SetClock(o.meterNow)
	}
	meterCtx, stopMeter := context.WithCancel(context.Background())
	metered := make(chan struct{})
	go func() {
		defer close(metered)
		meter.Run(meterCtx, func(err error) { o.logger.Warn("usage flush failed", zap.Error(err)) })
	}()
	stops = append(stops, func() {
		stopMeter()
		<-metered
		if err := meter.Close(context.Background()); err != nil {
			t.Errorf("servertest: flushing the usage counts: %v", err)
		}
	})
	// Mail goes out as cored's does, sooner: the tests wait for it.
	outbox := mail.NewOutbox(dataStore, keys)
	reg.OnDelete(outbox.Drop)
	worker := mail.NewWorker(o.mailCfg, outbox, reg.Instances)
	mailCtx, stopMail := context.WithCancel(context.Background())
	mailed := make(chan struct{})
	go func() {
		defer close(mailed)
		worker.Run(mailCtx, func(err error) { o.logger.Warn("sending mail failed", zap.Error(err)) })
	}()
	stops = append(stops, func() { stopMail(); <-mailed })
	engine := gql.NewEngine(o.gqlCfg, dataStore, reg, accounts, o.logger, gql.WithFunctions(functions), gql.WithFunctionLog(logs),
		gql.WithMeter(meter), gql.WithMail(outbox),
		gql.WithContents(contentsOf(st)))
	if o.backups != "" {
		dir, err := backup.NewDir(st, o.backups, 5)
		if err != nil {
			t.Fatalf("servertest: the backup folder: %v", err)
		}
		serverOpts = append(serverOpts, server.WithBackups(dir))
	}
	hcfg := hooks.Config{AllowPrivate: true}
	if o.hooks != nil {
		hcfg = *o.hooks
	}
	_, hcfg.Shared = st.(*mongo.Store)
	deliveries := hooks.New(dataStore, reg, keys, hcfg, o.logger)
	serverOpts = append(serverOpts, server.WithHookTester(deliveries))
	srv := server.New(o.cfg, o.logger, st, reg, engine, append(serverOpts, o.server...)...)
	reg.OnDelete(func(ctx context.Context, id string) error { return hooks.Forget(ctx, st, id) }) // as cmd/cored does
	hooksCtx, stopHooks := context.WithCancel(context.Background())
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		deliveries.Run(hooksCtx)
	}()
	stops = append(stops, func() { stopHooks(); <-delivered })
	hs := httptest.NewServer(srv.Handler())
	stops = append(stops, hs.Close)
	consoleURL := ""
	if h := srv.ConsoleHandler(); h != nil {
		chs := httptest.NewServer(h)
		stops = append(stops, chs.Close)
		consoleURL = chs.URL
	}
	e := &Env{t: t, URL: hs.URL, Outbox: outbox, ConsoleURL: consoleURL, Store: st, Directory: reg, Engine: engine, Accounts: accounts, Server: srv, Client: hs.Client(),
		Packages: packages, Logs: logs, Functions: runtime, Images: imgs, Meter: meter, Hooks: deliveries, stops: stops}
	t.Cleanup(e.Stop) // runs before the store closes
	return e
}

// contentsOf returns the file contents of a store that keeps them
// (store.ContentsHolder), nil otherwise.
func contentsOf(st store.Store) store.Contents {
	if h, ok := st.(store.ContentsHolder); ok {
		return h.Contents()
	}
	return nil
}

// MeterInterval is how often a test server flushes its usage counts.
const MeterInterval = 2 * time.Second

// Stop stops the server as cored stops: no more requests, then the
// function runtime and its logs, then a last flush of the usage counts;
// the store stays open (a store given with WithStore can then be closed
// and opened again, as after a restart). t.Cleanup calls it; calling it
// again does nothing.
func (e *Env) Stop() {
	e.stopOnce.Do(func() {
		for i := len(e.stops) - 1; i >= 0; i-- {
			e.stops[i]()
		}
	})
}

// DoRaw sends a request and returns the response (body already read and
// closed) and its body. body is sent as is when it is a string or []byte,
// as JSON otherwise, and not at all when nil.
func (e *Env) DoRaw(method, path string, headers map[string]string, body any) (*http.Response, []byte) {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewBufferString(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("servertest: encoding the body of %s %s: %v", method, path, err)
		}
		r = bytes.NewReader(j)
		var sent any
		if json.Unmarshal(j, &sent) == nil {
			noteSecrets(sent)
		}
	}
	if auth := headers["authorization"]; auth != "" {
		noteSecret(auth)
	}
	if u, err := url.Parse(path); err == nil {
		for _, k := range []string{"password", "token", "sessionToken"} {
			for _, v := range u.Query()[k] {
				noteSecret(v)
			}
		}
	}
	req, err := http.NewRequest(method, e.URL+path, r)
	if err != nil {
		e.t.Fatalf("servertest: %s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("content-type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, out := Send(e.t, e.Client, req)
	var got any
	if json.Unmarshal(out, &got) == nil {
		noteSecrets(got)
	}
	return res, out
}

// Send sends req with c (nil: http.DefaultClient) and returns the
// response, its body read and closed, and the body; a request that gets
// no answer fails tb.
func Send(tb testing.TB, c *http.Client, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		tb.Fatalf("servertest: %s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("servertest: %s %s: reading the answer: %v", req.Method, req.URL, err)
	}
	return res, out
}

// Get is Send of a GET of url.
func Get(tb testing.TB, c *http.Client, url string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return Send(tb, c, req)
}

// Do sends a request (see DoRaw) whose answer must be a JSON object and
// returns the status and the decoded object.
func (e *Env) Do(method, path string, headers map[string]string, body any) (int, map[string]any) {
	e.t.Helper()
	res, out := e.DoRaw(method, path, headers, body)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		e.t.Fatalf("servertest: %s %s answered %d with a body that is not a JSON object: %v\n%s", method, path, res.StatusCode, err, out)
	}
	return res.StatusCode, m
}

// AdminHeaders returns the headers that authorise an admin API request.
func (e *Env) AdminHeaders() map[string]string {
	return map[string]string{"authorization": AdminToken}
}

// Admin sends a request to the admin API with the admin token; path is
// relative to /admin/v1.
func (e *Env) Admin(method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	return e.Do(method, "/admin/v1"+path, e.AdminHeaders(), body)
}

// PutRelease publishes a release, which must succeed, and returns the
// answer.
func (e *Env) PutRelease(app, release, sdl string) map[string]any {
	e.t.Helper()
	status, body := e.Admin(http.MethodPut, "/apps/"+app+"/releases/"+release, map[string]any{"schema": sdl})
	if status != http.StatusOK {
		e.t.Fatalf("servertest: PUT release %s/%s answered %d: %s", app, release, status, dump(body))
	}
	return body
}

// PublishFunctions publishes each source (a function package's
// index.js) as version v1 of the function of its name in app, which must
// succeed.
func (e *Env) PublishFunctions(app string, sources map[string]string) {
	e.t.Helper()
	for name, src := range sources {
		if res, raw := e.DoRaw(http.MethodPut, "/admin/v1/apps/"+app+"/functions/"+name+"/v1", e.AdminHeaders(), []byte(src)); res.StatusCode >= 300 {
			e.t.Fatalf("servertest: publishing function %s of %s: %d %s", name, app, res.StatusCode, raw)
		}
	}
}

// CreateInstance creates an instance, which must succeed, and returns its
// token.
func (e *Env) CreateInstance(domain, app, release string, settings tenant.Settings) string {
	e.t.Helper()
	req := map[string]any{}
	raw, _ := json.Marshal(settings)
	_ = json.Unmarshal(raw, &req)
	req["domain"], req["app"], req["release"] = domain, app, release
	status, body := e.Admin(http.MethodPost, "/instances", req)
	token, _ := body["token"].(string)
	if status != http.StatusCreated || token == "" {
		e.t.Fatalf("servertest: creating instance %s answered %d: %s", domain, status, dump(body))
	}
	return token
}

// GraphQL posts a GraphQL request to /graphql for domain, with token in
// the authorization header unless it is empty, and returns the status and
// the answer.
func (e *Env) GraphQL(domain, token, query string, vars map[string]any) (int, map[string]any) {
	e.t.Helper()
	h := map[string]string{tenant.Header: domain}
	if token != "" {
		h["authorization"] = token
	}
	req := map[string]any{"query": query}
	if vars != nil {
		req["variables"] = vars
	}
	return e.Do(http.MethodPost, "/graphql", h, req)
}

// Data posts a GraphQL request as GraphQL does, which must answer 200
// without errors, and returns its data.
func (e *Env) Data(domain, token, query string, vars map[string]any) map[string]any {
	e.t.Helper()
	status, body := e.GraphQL(domain, token, query, vars)
	if status != http.StatusOK || body["errors"] != nil {
		e.t.Fatalf("servertest: %s: %d %s", query, status, dump(body))
	}
	d, _ := body["data"].(map[string]any)
	return d
}

// FirstError returns the message and code of the first entry of an error
// envelope ({"errors": [{"message", "extensions": {"code"}}]}); empty
// strings when there is none.
func FirstError(body map[string]any) (message, code string) {
	errs, _ := body["errors"].([]any)
	if len(errs) == 0 {
		return "", ""
	}
	e, _ := errs[0].(map[string]any)
	message, _ = e["message"].(string)
	ext, _ := e["extensions"].(map[string]any)
	code, _ = ext["code"].(string)
	return message, code
}

func dump(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
