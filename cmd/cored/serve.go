package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/corehq/core/admin"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/hooks"
	"github.com/corehq/core/internal/periodic"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/mail"
	"github.com/corehq/core/metrics"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/schedule"
	"github.com/corehq/core/server"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/tenant"
)

// serveFlags are the settings of `cored serve`.
type serveFlags struct {
	addr, data, mongoURI, adminToken, logLevel, bodyLimit, requestTimeout, gateway, debugAddr, trustedProxies, rateLimit, metricsAddr string
	keyFile                                                                                                                           string
	functionMemory, functionMemoryMax, consoleAddr                                                                                    string
	backupDir, backupEvery, fileSweepAge                                                                                              string
	backupKeep                                                                                                                        int
	demo, reusePort, hookAllowPrivate                                                                                                 bool
	// adminTokenInArgs: the admin token came from --admin-token, which
	// every local user can read in the process's argv (a warning at start).
	adminTokenInArgs bool
	gcPercent        int
}

// parseServe reads the flags of serve; each falls back to its environment
// variable, then to its default. Secrets (the admin token, the MongoDB URI
// with its password) are not shown as flag defaults.
func parseServe(args []string, getenv func(string) string, stderr io.Writer) (serveFlags, error) {
	def := server.DefaultConfig()
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.addr, "addr", envOr(getenv, "CORE_ADDR", def.Addr), "TCP address to listen on ($CORE_ADDR)")
	fs.StringVar(&f.data, "data", envOr(getenv, "CORE_DATA_DIR", "./data"), "data directory; the embedded store is core.db inside ($CORE_DATA_DIR)")
	fs.StringVar(&f.keyFile, "key-file", envOr(getenv, "CORE_KEY_FILE", ""),
		"the key file (signing and encryption keys, kept outside the store; owner-only permissions); default core.keys in --data, "+
			"made on first start; required with --mongo-uri, shared by every process (cored keys init) ($CORE_KEY_FILE)")
	fs.StringVar(&f.mongoURI, "mongo-uri", "", "MongoDB connection string, e.g. mongodb://host1,host2/core?replicaSet=rs0 (default $CORE_MONGO_URI); when set, MongoDB is the store and --data is not used")
	fs.StringVar(&f.adminToken, "admin-token", "", "admin token of /admin/v1 (default $CORE_ADMIN_TOKEN; generated on first start when unset)")
	fs.StringVar(&f.logLevel, "log-level", envOr(getenv, "CORE_LOG_LEVEL", "info"), "debug, info, warn or error ($CORE_LOG_LEVEL)")
	fs.StringVar(&f.bodyLimit, "body-limit", envOr(getenv, "CORE_BODY_LIMIT", "1MiB"), "largest request body: bytes, or with KiB, MiB, GiB ($CORE_BODY_LIMIT)")
	fs.StringVar(&f.requestTimeout, "request-timeout", envOr(getenv, "CORE_REQUEST_TIMEOUT", def.RequestTimeout.String()),
		"the most one request may take, e.g. 30s; past it the request stops and answers 504 ($CORE_REQUEST_TIMEOUT)")
	fs.StringVar(&f.gateway, "function-gateway", envOr(getenv, "CORE_FUNCTION_GATEWAY", ""),
		"URL of an HTTP function gateway (OpenFaaS, Knative) that runs non-JavaScript function images, with {app}, {name} and {version}, "+
			"e.g. http://gateway:8080/function/{app}-{name}-{version}; off when empty ($CORE_FUNCTION_GATEWAY)")
	fs.StringVar(&f.debugAddr, "debug-addr", envOr(getenv, "CORE_DEBUG_ADDR", ""),
		"loopback address (127.0.0.1:6060) to serve Go's profiler at /debug/pprof/ on; off when empty ($CORE_DEBUG_ADDR)")
	fs.StringVar(&f.trustedProxies, "trusted-proxies", envOr(getenv, "CORE_TRUSTED_PROXIES", ""),
		"comma-separated CIDR prefixes (or addresses) of the proxies in front, e.g. 10.0.0.0/8; only from those peers are "+
			"X-Forwarded-For and Forwarded believed for the client's address; none when empty ($CORE_TRUSTED_PROXIES)")
	fs.StringVar(&f.rateLimit, "rate-limit", envOr(getenv, "CORE_RATE_LIMIT", ""),
		"requests per second each instance may make unless its rateLimit setting says otherwise, as RATE or RATE/BURST (100/200); "+
			"none when empty ($CORE_RATE_LIMIT)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", envOr(getenv, "CORE_METRICS_ADDR", ""),
		"address (127.0.0.1:9090) to serve Prometheus metrics at /metrics on, a listener of its own; off when empty ($CORE_METRICS_ADDR)")
	fs.StringVar(&f.consoleAddr, "console-addr", envOr(getenv, "CORE_CONSOLE_ADDR", ""),
		"address (127.0.0.1:8081) to serve the web console on, a listener and origin of its own with the admin API and /graphql it calls "+
			"and no tenant content; --addr then does not serve /console/. Recommended in production; on --addr when empty ($CORE_CONSOLE_ADDR)")
	fs.StringVar(&f.functionMemory, "function-memory", envOr(getenv, "CORE_FUNCTION_MEMORY", "64MiB"),
		"memory one function call may use unless its instance's functionMemory setting says otherwise ($CORE_FUNCTION_MEMORY)")
	fs.StringVar(&f.functionMemoryMax, "function-memory-max", envOr(getenv, "CORE_FUNCTION_MEMORY_MAX", "256MiB"),
		"the most memory an instance's functionMemory setting may give one call; also the operating system's limit of each "+
			"function worker process beyond its own needs ($CORE_FUNCTION_MEMORY_MAX)")
	fs.BoolVar(&f.reusePort, "reuse-port", envOr(getenv, "CORE_REUSE_PORT", "") == "1",
		"bind --addr with SO_REUSEPORT (Linux only), so that several cored processes on this machine serve one port and the kernel spreads connections among them ($CORE_REUSE_PORT=1)")
	gc, err := strconv.Atoi(envOr(getenv, "CORE_GC_PERCENT", strconv.Itoa(defaultGCPercent)))
	if err != nil {
		return f, usageError{fmt.Sprintf("CORE_GC_PERCENT %q: not a whole number", getenv("CORE_GC_PERCENT"))}
	}
	fs.IntVar(&f.gcPercent, "gc-percent", gc,
		"how far (in %) the heap may grow past what is live before Go collects garbage: higher spends less CPU on collection and more memory; "+
			"the GOGC environment variable, when set, wins ($CORE_GC_PERCENT)")
	fs.StringVar(&f.backupDir, "backup-dir", envOr(getenv, "CORE_BACKUP_DIR", ""),
		"folder of the backups the server takes (POST /admin/v1/backups, --backup-every); default backups in --data ($CORE_BACKUP_DIR)")
	fs.StringVar(&f.backupEvery, "backup-every", envOr(getenv, "CORE_BACKUP_EVERY", ""),
		"take a backup this often, e.g. 6h; none when empty ($CORE_BACKUP_EVERY)")
	keep, err := strconv.Atoi(envOr(getenv, "CORE_BACKUP_KEEP", "7"))
	if err != nil {
		return f, usageError{fmt.Sprintf("CORE_BACKUP_KEEP %q: not a whole number", getenv("CORE_BACKUP_KEEP"))}
	}
	fs.IntVar(&f.backupKeep, "backup-keep", keep, "how many backups to keep in --backup-dir, the newest; 0 keeps all ($CORE_BACKUP_KEEP)")
	fs.BoolVar(&f.hookAllowPrivate, "hook-allow-private", envOr(getenv, "CORE_HOOK_ALLOW_PRIVATE", "") == "1",
		"let event hooks post to loopback, private and link-local addresses (refused by default, as function fetch refuses them) ($CORE_HOOK_ALLOW_PRIVATE=1)")
	fs.StringVar(&f.fileSweepAge, "file-sweep-age", envOr(getenv, "CORE_FILE_SWEEP_AGE", "1h"),
		"on MongoDB, the start's sweep removes the file contents no record names that are older than this (other processes may be uploading younger ones); "+
			"0s removes them all, for when no other process serves the database ($CORE_FILE_SWEEP_AGE)")
	fs.BoolVar(&f.demo, "demo", false, "deploy the demo app on demo.local, seed it and print a curl to try it")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return f, err
	}
	if len(pos) > 0 {
		return f, usageError{fmt.Sprintf("serve takes no arguments, got %q", pos)}
	}
	if f.mongoURI == "" {
		f.mongoURI = getenv("CORE_MONGO_URI")
	}
	f.adminTokenInArgs = f.adminToken != ""
	if f.adminToken == "" {
		f.adminToken = getenv("CORE_ADMIN_TOKEN")
	}
	if f.metricsAddr != "" && f.metricsAddr == f.addr {
		return f, usageError{fmt.Sprintf("--metrics-addr %q: metrics are never served on the public listener (--addr); give another address", f.metricsAddr)}
	}
	if f.consoleAddr != "" && !strings.HasSuffix(f.consoleAddr, ":0") && (f.consoleAddr == f.addr || f.consoleAddr == f.metricsAddr) {
		return f, usageError{fmt.Sprintf("--console-addr %q: the console's listener is its own; give another address than --addr and --metrics-addr", f.consoleAddr)}
	}
	if f.gcPercent < 10 || f.gcPercent > 10000 {
		return f, usageError{fmt.Sprintf("--gc-percent %d: between 10 and 10000 (Go's default is 100, cored's %d)", f.gcPercent, defaultGCPercent)}
	}
	if f.reusePort && !reusePortSupported {
		return f, usageError{"--reuse-port: SO_REUSEPORT is used on Linux only"}
	}
	if f.debugAddr != "" && !isLoopback(f.debugAddr) {
		return f, usageError{fmt.Sprintf("--debug-addr %q: the profiler is served on loopback addresses only (127.0.0.1:PORT or [::1]:PORT)", f.debugAddr)}
	}
	return f, nil
}

// serve runs the service until SIGINT or SIGTERM (or ctx ends), then
// drains the requests in flight and returns nil.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f, err := parseServe(args, getenv, stderr)
	if err != nil {
		return err
	}
	level, err := zapcore.ParseLevel(f.logLevel)
	if err != nil {
		return usageError{fmt.Sprintf("--log-level: %v", err)}
	}
	if getenv("GOGC") == "" {
		debug.SetGCPercent(f.gcPercent)
	}
	limit, err := parseSize(f.bodyLimit)
	if err != nil {
		return usageError{fmt.Sprintf("--body-limit: %v", err)}
	}
	timeout, err := time.ParseDuration(f.requestTimeout)
	if err != nil || timeout <= 0 {
		return usageError{fmt.Sprintf("--request-timeout: %q is not a positive duration such as 30s", f.requestTimeout)}
	}
	sweepAge, err := time.ParseDuration(f.fileSweepAge)
	if err != nil || sweepAge < 0 {
		return usageError{fmt.Sprintf("--file-sweep-age: %q is not a duration such as 1h or 0s", f.fileSweepAge)}
	}
	proxies, err := server.ParseTrustedProxies(f.trustedProxies)
	if err != nil {
		return usageError{"--" + err.Error()}
	}
	fcfg := fn.DefaultConfig()
	if fcfg.Memory, err = parseSize(f.functionMemory); err != nil {
		return usageError{"--function-memory: " + err.Error()}
	}
	if fcfg.MaxMemory, err = parseSize(f.functionMemoryMax); err != nil {
		return usageError{"--function-memory-max: " + err.Error()}
	}
	if err := fcfg.Validate(); err != nil {
		return usageError{fmt.Sprintf("--function-memory %s, --function-memory-max %s: %v", f.functionMemory, f.functionMemoryMax, err)}
	}
	gcfg := gql.DefaultConfig()
	if gcfg.RateLimit, err = parseRateLimit(f.rateLimit); err != nil {
		return usageError{"--rate-limit: " + err.Error()}
	}
	log, stopLog := newLogger(stderr, level)
	defer stopLog()

	// Bind first: a start that cannot listen (the port is taken) fails
	// before a one-time admin token is generated and shown.
	ln, err := listen(ctx, f.addr, f.reusePort)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it too; closing twice is harmless
	var consoleLn net.Listener
	if f.consoleAddr != "" {
		if consoleLn, err = net.Listen("tcp", f.consoleAddr); err != nil {
			return fmt.Errorf("--console-addr: %w", err)
		}
		defer consoleLn.Close()
	}

	keys, madeKeys, err := openKeys(f)
	if err != nil {
		return err
	}
	st, where, err := openStore(ctx, f, log)
	if err != nil {
		return err
	}
	defer st.Close()

	reg := tenant.NewDirectory(st, tenant.WithSealer(keys))
	reg.LimitFunctionMemory(fcfg.MaxMemory) // what the runtime will enforce
	if err := reg.Load(ctx); err != nil {
		if madeKeys { // the data was sealed with a key file that is missing: do not leave a new one in its place
			_ = os.Remove(keys.Path())
		}
		return err
	}
	log.Info("key ring", zap.String("file", keys.Path()), zap.Bool("generated", madeKeys),
		zap.String("active", keys.Ring().Active()), zap.Int("keys", len(keys.Ring().Keys())))
	if err := migrateSecrets(ctx, st, reg, log); err != nil {
		return err
	}
	if f.adminTokenInArgs {
		log.Warn("the admin token was given with --admin-token, which any local user can read in this process's command line; give it in CORE_ADMIN_TOKEN instead")
	}
	hash, generated, err := admin.SetupToken(ctx, st, f.adminToken)
	if err != nil {
		return err
	}
	if generated != "" {
		fmt.Fprintf(stdout, "admin token (generated on first start, shown once; keep it or set CORE_ADMIN_TOKEN): %s\n", generated)
	}

	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BodyLimit, cfg.AdminTokenHash, cfg.RequestTimeout = f.addr, limit, hash, timeout
	cfg.TrustedProxies = proxies
	cfg.ConsoleAddr = f.consoleAddr
	accounts := auth.NewAccounts(keys)
	var failures *auth.SharedFailures
	if f.mongoURI != "" {
		// Processes on one MongoDB share the failed-login counts.
		failures = auth.NewSharedFailures(st, accounts.Now)
		accounts.Throttle.Share(failures)
	}
	fns, err := newFunctions(st, reg, fcfg)
	if err != nil {
		return err
	}
	defer fns.close(log)         // before the store closes: the function logs flush into it
	reg.OnDelete(fns.logs.Clear) // a deleted instance's function log goes with it
	imgs, runtime, err := newImages(ctx, st, fns, hash, keys, f.gateway, log)
	if err != nil {
		return err
	}
	defer imgs.Close()
	var deliveries *hooks.Service   // the event hooks, started below (metrics read them once served)
	var scheduler *schedule.Service // the scheduled functions, likewise
	// On MongoDB several processes may serve the instances: they count
	// each other (tenant.Peers) and divide the rate limits.
	peers := tenant.NewPeers(st, peerInterval)
	dataStore, calls := st, runtime
	srvOpts := []server.Option{server.WithFunctions(fns.packages, fns.logs), server.WithImages(imgs)}
	var m *metrics.Metrics
	if f.metricsAddr != "" {
		m = metrics.New(metrics.Sources{DocumentCache: gql.DocumentCacheStats, Instances: func() int { return len(reg.Instances()) },
			HookPosts:     func() (uint64, uint64) { s := deliveries.Stats(); return s.Delivered, s.Failed },
			ScheduledRuns: func() (uint64, uint64) { return scheduler.Stats() }})
		dataStore, calls = m.Store(st), m.Functions(runtime)
		srvOpts = append(srvOpts, server.WithMetrics(m))
	}
	// Usage counts (requests, function calls) go to the store every
	// meterInterval, and once more when the server has drained.
	meter := tenant.NewMeter(dataStore, meterInterval)
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := meter.Close(fctx); err != nil {
			log.Warn("flushing usage counts failed", zap.Error(err))
		}
	}() // before the store closes, after the requests
	// The accounts' mail waits in an outbox in the store (sealed), sent
	// by every process's worker, each message by one (mail.Worker).
	outbox := mail.NewOutbox(dataStore, keys)
	reg.OnDelete(outbox.Drop)
	engine := gql.NewEngine(gcfg, dataStore, reg, accounts, log, gql.WithFunctions(calls), gql.WithFunctionLog(fns.logs),
		gql.WithRateShare(peers.Count), gql.WithMeter(meter), gql.WithMail(outbox),
		gql.WithContents(st.(store.ContentsHolder).Contents()))
	backups, every, err := openBackups(f, st)
	if err != nil {
		return err
	}
	srvOpts = append(srvOpts, server.WithBackups(backups))
	if err := sweepFiles(ctx, engine, st, sweepAge, log); err != nil {
		return err
	}
	hcfg := hooks.DefaultConfig()
	hcfg.AllowPrivate, hcfg.Shared = f.hookAllowPrivate, f.mongoURI != ""
	deliveries = hooks.New(dataStore, reg, keys, hcfg, log)
	srvOpts = append(srvOpts, server.WithHookTester(deliveries))
	srv := server.New(cfg, log, st, reg, engine, srvOpts...)
	reg.OnDelete(func(ctx context.Context, id string) error { return hooks.Forget(ctx, st, id) }) // its hooks' cursors and leases
	scheduler = schedule.New(dataStore, reg.Instances, engine, schedule.DefaultConfig(), log)
	reg.OnDelete(func(ctx context.Context, id string) error { return schedule.Forget(ctx, st, id) }) // its claims of ticks
	if consoleLn != nil {
		log.Info("console listening", zap.String("addr", consoleLn.Addr().String()))
	}
	log.Info("listening", zap.String("addr", ln.Addr().String()), zap.String("store", where),
		zap.Int("instances", len(reg.Instances())))
	_ = log.Sync() // whoever started the server waits for this line
	if f.demo {
		if err := deployDemo(ctx, reg, srv.Handler(), baseURL(ln.Addr()), stdout); err != nil {
			ln.Close()
			return err
		}
	}

	sctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if f.debugAddr != "" {
		if _, err := serveDebug(sctx, f.debugAddr, log); err != nil {
			ln.Close()
			return err
		}
	}
	if m != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", m.Handler())
		if _, err := serveAside(sctx, f.metricsAddr, "metrics", mux, log); err != nil {
			ln.Close()
			return err
		}
	}
	go periodic.Run(sctx, fileSweepInterval, func(ctx context.Context) error {
		_, err := engine.SweepFiles(ctx, time.Now().Add(-fileSweepInterval))
		return err
	}, func(err error) { log.Warn("sweeping file contents failed", zap.Error(err)) })
	// Other cored processes on the same store may change releases and
	// instances: follow them (DESIGN.md: served by all within 2 s).
	if every > 0 {
		go backups.Schedule(sctx, every, func(err error) { log.Error("scheduled backup failed", zap.Error(err)) })
	}
	go reg.Watch(sctx, directorySyncInterval, func(err error) { log.Warn("directory refresh failed", zap.Error(err)) })
	if f.mongoURI != "" {
		go peers.Run(sctx, func(err error) { log.Warn("peer heartbeat failed", zap.Error(err)) })
		go failures.SweepEvery(sctx, time.Minute, func(err error) { log.Warn("sweeping failed logins failed", zap.Error(err)) })
	}
	go meter.Run(sctx, func(err error) { log.Warn("flushing usage counts failed", zap.Error(err)) })
	go mail.NewWorker(mail.DefaultConfig(), outbox, reg.Instances).Run(sctx, func(err error) { log.Warn("sending mail failed", zap.Error(err)) })
	// Event hooks: the instances' changes posted to their endpoints; on
	// MongoDB each instance's hooks by one process at a time (a lease).
	delivered := make(chan struct{})
	go func() { defer close(delivered); deliveries.Run(sctx) }()
	defer func() { stop(); <-delivered }() // the cursors are written before the store closes
	// Scheduled functions: each due tick run by one process (a claim).
	scheduled := make(chan struct{})
	go func() { defer close(scheduled); scheduler.Run(sctx) }()
	defer func() { stop(); <-scheduled }() // the runs' outcomes are written before the store closes
	// The key file is read again when it changes (cored keys rotate,
	// retire): new sessions are signed with its active key, and what the
	// store keeps sealed is sealed again with it.
	go keys.Watch(sctx, keyReloadInterval, func(r *keyring.Ring) {
		log.Info("key ring changed", zap.String("active", r.Active()), zap.Int("keys", len(r.Keys())))
		resealSecrets(sctx, reg, imgs, log)
	}, func(err error) {
		log.Warn("reading the key file again failed; the keys read before stay in use", zap.Error(err))
	})
	go imgs.CollectEvery(sctx, imageGCInterval, func(err error) { log.Warn("image garbage collection failed", zap.Error(err)) })
	go imgs.SweepUploadsEvery(sctx, func(err error) { log.Warn("sweeping aborted image uploads failed", zap.Error(err)) })
	draining := make(chan struct{})
	context.AfterFunc(sctx, func() {
		log.Info("shutting down: draining requests in flight")
		close(draining)
	})
	consoleDone := make(chan error, 1)
	if consoleLn != nil {
		go func() { consoleDone <- srv.ServeConsole(sctx, consoleLn) }()
	} else {
		consoleDone <- nil
	}
	if err := srv.Serve(sctx, ln); err != nil {
		stop() // the console's listener drains too
		return errors.Join(err, <-consoleDone)
	}
	if err := <-consoleDone; err != nil {
		return err
	}
	<-draining // Serve returns nil only once sctx is done: the line is (being) written
	log.Info("stopped")
	return nil
}

// functions are the process's function runtime and its storage: the
// published packages and the instances' function logs, both kept in the
// store.
type functions struct {
	reg      *tenant.Directory
	packages *fn.Packages
	logs     *fn.Log
	// runtime runs the functions bound with @fn (a fn.Runtime for gql).
	runtime *fn.JS
}

func newFunctions(st store.Store, reg *tenant.Directory, cfg fn.Config) (*functions, error) {
	pk := fn.NewPackages(st, fn.DefaultPackagesConfig())
	logs := fn.NewLog(st, fn.DefaultLogConfig())
	rt, err := fn.NewJS(cfg, pk, logs)
	if err != nil {
		_ = logs.Close() // nothing was logged yet
		return nil, err
	}
	return &functions{reg: reg, packages: pk, logs: logs, runtime: rt}, nil
}

// close lets the calls in flight finish, then writes the buffered log
// entries.
func (f *functions) close(log *zap.Logger) {
	_ = f.runtime.Close() // never fails
	if err := f.logs.Close(); err != nil {
		log.Warn("writing the function logs failed", zap.Error(err))
	}
}

// newImages starts the function image registry (served at /v2/) and the
// runtime that runs its images: JavaScript ones on the embedded runtime,
// others on the function gateway when one is configured.
func newImages(ctx context.Context, st store.Store, fns *functions, adminHash [32]byte, keys *keyring.Keeper, gateway string, log *zap.Logger) (*oci.Registry, fn.Runtime, error) {
	oci.RouteLibraryLogs(log)
	imgs, err := oci.New(ctx, oci.DefaultConfig(), st, fns.packages, adminHash, keys)
	if err != nil {
		return nil, nil, err
	}
	var engine fn.Runtime
	if gateway != "" {
		gcfg := fn.DefaultGatewayConfig()
		gcfg.URL = gateway
		gw, err := fn.NewGateway(gcfg, fns.logs)
		if err != nil {
			_ = imgs.Close()
			return nil, nil, usageError{fmt.Sprintf("--function-gateway: %v", err)}
		}
		engine = gw
	}
	return imgs, fn.NewRouter(fns.runtime, imgs, engine), nil
}

// keyReloadInterval is how often the key file is checked for a change
// (its modification time, size or inode: a stat call).
const keyReloadInterval = 2 * time.Second

// imageGCInterval is how often the image registry collects garbage.
const imageGCInterval = 6 * time.Hour

// meterInterval is how often the usage counts of the instances are added
// to the store (tenant.Meter).
const meterInterval = 2 * time.Second

// defaultGCPercent is cored's garbage collection target (GOGC). Go's 100
// made collection a sixth of the CPU of a list or a create in the load
// test (GOMAXPROCS 1, a live heap of a few MB); 200 cut their CPU per
// request by 13-18 % for 4-5 MB more RSS (docs/configuration.md).
const defaultGCPercent = 200

// peerInterval is how often a process on MongoDB writes its heartbeat
// and counts the others (tenant.Peers).
const peerInterval = 2 * time.Second

// parseRateLimit reads RATE or RATE/BURST; "" is no limit.
func parseRateLimit(s string) (*tenant.RateLimit, error) {
	if s == "" {
		return nil, nil
	}
	rate, burst, hasBurst := strings.Cut(s, "/")
	r := &tenant.RateLimit{}
	var err error
	if r.RequestsPerSecond, err = strconv.ParseFloat(strings.TrimSpace(rate), 64); err != nil {
		return nil, fmt.Errorf("%q is not RATE or RATE/BURST, such as 100 or 100/200", s)
	}
	if hasBurst {
		if r.Burst, err = strconv.Atoi(strings.TrimSpace(burst)); err != nil {
			return nil, fmt.Errorf("%q is not RATE or RATE/BURST, such as 100 or 100/200", s)
		}
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	return r, nil
}

// directorySyncInterval is how often the directory looks for changes made by
// other processes sharing the store.
const directorySyncInterval = 500 * time.Millisecond

// fileSweepInterval is how often the contents no File record names are
// removed, and how old they must be: an upload writes its record
// within it of putting its content.
const fileSweepInterval = time.Hour

// sweepFiles removes, before the server serves, what uploads a crash
// interrupted left: on the embedded store every content without a
// record (no other process writes it), on MongoDB those older than age
// (--file-sweep-age, an hour by default: other processes may be
// uploading now; this one is not yet).
func sweepFiles(ctx context.Context, engine *gql.Engine, st store.Store, age time.Duration, log *zap.Logger) error {
	before := time.Now().Add(-age)
	if _, ok := st.(*bolt.Store); ok {
		before = time.Now()
	}
	n, err := engine.SweepFiles(ctx, before)
	if err != nil {
		return fmt.Errorf("sweeping file contents: %w", err)
	}
	if n > 0 {
		log.Info("removed file contents no record names", zap.Int("contents", n))
	}
	return nil
}

// openStore opens the MongoDB store when a URI is set, else the embedded
// store in the data directory. where describes it for the log, without the
// URI (which may hold a password).
func openStore(ctx context.Context, f serveFlags, log *zap.Logger) (st store.Store, where string, err error) {
	if f.mongoURI != "" {
		cfg := mongo.DefaultConfig(f.mongoURI)
		cfg.Log = log
		ms, err := mongo.Open(ctx, cfg)
		if err != nil {
			return nil, "", fmt.Errorf("the MongoDB store is not available (--mongo-uri / CORE_MONGO_URI): %w", err)
		}
		return ms, "mongodb database " + ms.Database(), nil
	}
	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return nil, "", fmt.Errorf("creating the data directory: %w", err)
	}
	dbPath := filepath.Join(f.data, "core.db")
	bs, err := bolt.Open(dbPath, bolt.DefaultConfig())
	if err != nil {
		return nil, "", err
	}
	return bs, dbPath, nil
}

// newLogger is zap's production logger (JSON, no sampling: every request
// gets its line) writing to w.
// The log is buffered: a line per request written straight to stderr cost
// a write system call each, about a tenth of the CPU of a GET. Lines reach
// w within logFlushInterval, at once when a line of level Error or above
// is logged or the buffer fills, and when the server stops; a crash can
// lose the last second's lines.
const (
	logBufferSize    = 256 << 10
	logFlushInterval = time.Second
)

// newLogger returns the process's logger, writing JSON lines to w, and the
// function that flushes what is buffered and stops its flushing.
func newLogger(w io.Writer, level zapcore.Level) (*zap.Logger, func()) {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	out := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(w), Size: logBufferSize, FlushInterval: logFlushInterval}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), out, level)
	log := zap.New(core, zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel), zap.ErrorOutput(zapcore.AddSync(w)),
		zap.Hooks(func(e zapcore.Entry) error {
			if e.Level >= zapcore.ErrorLevel {
				return out.Sync()
			}
			return nil
		}))
	return log, func() { _ = out.Stop() } // stderr often cannot be synced; nothing to do about it
}

// parseSize reads a byte count: digits, optionally followed by B, KiB, MiB
// or GiB (K, M and G mean the same).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num := strings.TrimRight(s, "KMGiBkmgb")
	unit := strings.ToLower(strings.TrimSpace(s[len(num):]))
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size (bytes, or with KiB, MiB, GiB)", s)
	}
	shift := map[string]uint{"": 0, "b": 0, "k": 10, "kib": 10, "m": 20, "mib": 20, "g": 30, "gib": 30}
	sh, ok := shift[unit]
	if !ok || n > (1<<62)>>sh {
		return 0, fmt.Errorf("%q is not a positive size (bytes, or with KiB, MiB, GiB)", s)
	}
	return n << sh, nil
}

// baseURL is the URL a client on this machine reaches addr at.
func baseURL(addr net.Addr) string {
	host, port := "127.0.0.1", ""
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
		if !ta.IP.IsUnspecified() {
			host = ta.IP.String()
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}
