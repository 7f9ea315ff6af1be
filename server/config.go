package server

import (
	"net/netip"
	"time"
)

// Config configures the HTTP server.
type Config struct {
	// Addr is the TCP address Start listens on.
	Addr string
	// BodyLimit is the largest request body accepted, in bytes; a larger
	// one is refused with 413 TOO_LARGE without being read in full.
	BodyLimit int64
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound a
	// connection (net/http semantics).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// ShutdownTimeout is how long Serve waits for requests in flight once
	// its context ends; after it, remaining connections are closed.
	ShutdownTimeout time.Duration
	// PingTimeout bounds the store check of /readyz.
	PingTimeout time.Duration
	// RequestTimeout bounds the work of one request (but the image
	// registry's transfers, which have their own bound): past it the
	// request's context ends, which stops its store calls and functions,
	// and it answers 504 TIMEOUT.
	RequestTimeout time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For and Forwarded
	// headers are believed for the client's address (clientip.go); none
	// by default.
	TrustedProxies []netip.Prefix
	// ConsoleAddr, when set, puts the web console on a listener of its
	// own (ServeConsole; cored serve --console-addr), an origin that
	// serves no tenant's content: the console, the admin API and /graphql
	// it calls, and the health probes. Addr then does not serve /console/.
	// Empty: the console is served on Addr.
	ConsoleAddr string
	// AdminTokenHash is the SHA-256 of the admin token (admin.SetupToken).
	// The zero value lets no request into /admin/v1.
	AdminTokenHash [32]byte
}

// DefaultConfig returns the configuration cored serves with unless told
// otherwise.
func DefaultConfig() Config {
	return Config{
		Addr:              "127.0.0.1:8080",
		BodyLimit:         1 << 20,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ShutdownTimeout:   30 * time.Second,
		PingTimeout:       2 * time.Second,
		RequestTimeout:    30 * time.Second,
	}
}
