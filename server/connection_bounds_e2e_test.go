package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/server"
	"github.com/corehq/core/server/servertest"
)

// serveOnListener serves env's server through its own net/http server
// (Server.Serve, as cored serves: the configured ReadHeaderTimeout and
// header bounds apply, which the httptest front of servertest does not
// have) on an ephemeral loopback port, and returns its address.
func serveOnListener(t *testing.T, env *servertest.Env) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Server.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestSlowHeadersAreCut: a client that trickles its request's headers
// one byte at a time is disconnected once ReadHeaderTimeout has passed,
// long before its headers would end, and the server keeps serving.
//
// hostile checklist 33: headers trickled slowly (slowloris) → the
// connection is closed by ReadHeaderTimeout.
func TestSlowHeadersAreCut(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.ReadHeaderTimeout = time.Second }))
	addr := serveOnListener(t, env)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The server's end: a read that ends when the server closes the
	// connection (EOF or a reset), whatever it wrote before.
	closed := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, conn)
		if err == nil {
			err = io.EOF
		}
		closed <- err
	}()
	// 300 bytes at one per 200 ms: a minute of headers, sixty times the
	// time-out. The trickle stops as soon as the server has closed.
	trickle := "POST /graphql HTTP/1.1\r\nHost: x\r\ncore-domain: slow.test\r\nX-Slow: " + strings.Repeat("a", 300)
	sent := 0
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
trickling:
	for sent < len(trickle) {
		select {
		case <-closed:
			break trickling
		case <-tick.C:
			if _, err := conn.Write([]byte{trickle[sent]}); err != nil {
				break trickling // the server reset the connection
			}
			sent++
		}
	}
	if sent == len(trickle) {
		t.Fatalf("the server kept a connection open while its headers trickled for %d bytes", sent)
	}
	t.Logf("the slow connection was closed after %d of %d bytes (about %v)", sent, len(trickle), time.Duration(sent)*200*time.Millisecond)

	// The server still answers a normal request on the same listener.
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("after the slow client /healthz answers %d", res.StatusCode)
	}
}

// TestOversizedHeaderLine: a request with a single header line of more
// than 1 MB is answered 431 by the server's header bound (net/http's
// 1 MiB MaxHeaderBytes), before any door reads it, and the server keeps
// serving.
//
// hostile checklist 37: a 1 MB single header line → refused within the
// limits (431).
func TestOversizedHeaderLine(t *testing.T) {
	t.Parallel()
	env := servertest.Start(t)
	addr := serveOnListener(t, env)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Written by hand: the header is larger than Go's client allows itself.
	go func() {
		fmt.Fprintf(conn, "POST /webhook/hooks.test/mirror HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\nContent-Length: 2\r\n\r\n{}",
			strings.Repeat("b", 1<<20+8192))
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 1 MB header line: %d, want 431", res.StatusCode)
	}
	res2, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res2.Body.Close()
	if res2.StatusCode != 200 {
		t.Errorf("after the large header /healthz answers %d", res2.StatusCode)
	}
}
