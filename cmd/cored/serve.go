package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/corehq/core/admin"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/server"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/tenant"
)

// serveFlags are the settings of `cored serve`.
type serveFlags struct {
	addr, data, mongoURI, adminToken, logLevel, bodyLimit string
	demo                                                  bool
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
	fs.StringVar(&f.mongoURI, "mongo-uri", "", "MongoDB connection string (default $CORE_MONGO_URI); the MongoDB store is not in this version yet, so setting it fails")
	fs.StringVar(&f.adminToken, "admin-token", "", "admin token of /admin/v1 (default $CORE_ADMIN_TOKEN; generated on first start when unset)")
	fs.StringVar(&f.logLevel, "log-level", envOr(getenv, "CORE_LOG_LEVEL", "info"), "debug, info, warn or error ($CORE_LOG_LEVEL)")
	fs.StringVar(&f.bodyLimit, "body-limit", envOr(getenv, "CORE_BODY_LIMIT", "1MiB"), "largest request body: bytes, or with KiB, MiB, GiB ($CORE_BODY_LIMIT)")
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
	if f.adminToken == "" {
		f.adminToken = getenv("CORE_ADMIN_TOKEN")
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
	limit, err := parseSize(f.bodyLimit)
	if err != nil {
		return usageError{fmt.Sprintf("--body-limit: %v", err)}
	}
	if f.mongoURI != "" {
		return errors.New("the MongoDB store is not available in this version: unset --mongo-uri / CORE_MONGO_URI to use the embedded store in --data")
	}
	log := newLogger(stderr, level)
	defer func() { _ = log.Sync() }() // stderr often cannot be synced; nothing to do about it

	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	dbPath := filepath.Join(f.data, "core.db")
	st, err := bolt.Open(dbPath, bolt.DefaultConfig())
	if err != nil {
		return err
	}
	defer st.Close()

	gcfg := gql.DefaultConfig()
	reg := tenant.NewRegistry(st, gql.Compiler(gcfg), auth.NewToken)
	if err := reg.Load(ctx); err != nil {
		return err
	}
	hash, generated, err := admin.SetupToken(ctx, st, f.adminToken)
	if err != nil {
		return err
	}
	if generated != "" {
		fmt.Fprintf(stdout, "admin token (generated on first start, shown once; keep it or set CORE_ADMIN_TOKEN): %s\n", generated)
	}

	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BodyLimit, cfg.AdminTokenHash = f.addr, limit, hash
	secret, err := auth.LoadSecret(ctx, st)
	if err != nil {
		return fmt.Errorf("loading the session secret: %w", err)
	}
	accounts := auth.NewAccounts(secret)
	srv := server.New(cfg, log, st, reg, accounts, gql.NewHandler(st, accounts, log))
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	log.Info("listening", zap.String("addr", ln.Addr().String()), zap.String("store", dbPath),
		zap.Int("instances", len(reg.Instances())))
	if f.demo {
		if err := deployDemo(ctx, reg, srv.Handler(), baseURL(ln.Addr()), stdout); err != nil {
			ln.Close()
			return err
		}
	}

	sctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(sctx, func() { log.Info("shutting down: draining requests in flight") })
	if err := srv.Serve(sctx, ln); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// newLogger is zap's production logger (JSON, no sampling: every request
// gets its line) writing to w.
func newLogger(w io.Writer, level zapcore.Level) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(zapcore.AddSync(w)), level)
	return zap.New(core, zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel), zap.ErrorOutput(zapcore.AddSync(w)))
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
