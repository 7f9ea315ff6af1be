package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/tenant"
)

// slowServer is a server with a route /slow that signals entered and
// answers only once release is closed. It is built by hand: servertest
// imports this package.
func slowServer(t *testing.T, cfg Config) (s *Server, entered, release chan struct{}) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "core.db"), bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := tenant.NewDirectory(st)
	if err := reg.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	entered, release = make(chan struct{}), make(chan struct{})
	accounts := auth.NewAccounts(keyring.Hold(keyring.Generate()))
	s = New(cfg, zap.NewNop(), st, reg, gql.NewEngine(gql.DefaultConfig(), st, reg, accounts, zap.NewNop()), WithRoutes(func(e *echo.Echo) {
		e.GET("/slow", func(c echo.Context) error {
			close(entered)
			<-release
			return c.String(http.StatusOK, "done")
		})
	}))
	return s, entered, release
}

type answer struct {
	status int
	body   string
	err    error
}

func get(url string) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		res, err := http.Get(url)
		if err != nil {
			out <- answer{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		out <- answer{status: res.StatusCode, body: string(b), err: err}
	}()
	return out
}

// serve runs s on a new loopback listener until cancel (what SIGTERM does
// in cored); served receives what Serve returned.
func serve(t *testing.T, s *Server) (addr string, cancel context.CancelFunc, served <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan error, 1)
	go func() { out <- s.Serve(ctx, ln) }()
	return ln.Addr().String(), cancel, out
}

func TestServeDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	s, entered, release := slowServer(t, DefaultConfig())
	draining := make(chan struct{})
	s.http.RegisterOnShutdown(func() { close(draining) })
	addr, cancel, served := serve(t, s)
	got := get("http://" + addr + "/slow")
	<-entered
	cancel() // what SIGTERM does in cored
	<-draining
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) while a request was in flight", err)
	default:
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("a new connection was accepted while draining")
	}
	close(release)
	if a := <-got; a.err != nil || a.status != 200 || a.body != "done" {
		t.Errorf("the in-flight request got %d %q (%v), want 200 done", a.status, a.body, a.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve after a complete drain: %v, want nil", err)
	}
}

func TestServeGivesUpAfterShutdownTimeout(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.ShutdownTimeout = 50 * time.Millisecond
	s, entered, release := slowServer(t, cfg)
	defer close(release)
	addr, cancel, served := serve(t, s)
	got := get("http://" + addr + "/slow")
	<-entered
	cancel()
	if err := <-served; err == nil {
		t.Error("Serve returned nil although a request outlived the shutdown timeout")
	}
	if a := <-got; a.err == nil {
		t.Errorf("the stuck request got an answer (%d) after its connection was closed", a.status)
	}
}
