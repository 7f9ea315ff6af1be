package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"go.uber.org/zap"
)

// serveDebug serves Go's profiler (net/http/pprof) on addr, a loopback
// address, until ctx ends. Profiles show what the process spends its time
// and memory on; cmd/corebench fetches them with -profile. It returns the
// address listened on.
func serveDebug(ctx context.Context, addr string, log *zap.Logger) (net.Addr, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return serveAside(ctx, addr, "profiler", mux, log)
}

// serveAside serves h on a listener of its own at addr (the profiler, the
// metrics) until ctx ends.
func serveAside(ctx context.Context, addr, what string, h http.Handler, log *zap.Logger) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Info(what+" listening", zap.String("addr", ln.Addr().String()))
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn(what+" stopped", zap.Error(err))
		}
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return ln.Addr(), nil
}

// isLoopback reports whether addr (host:port) names a loopback host.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
