package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadResponse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, raw  string
		status     int
		body       string
		keep, fail bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, "hello", true, false},
		{"chunked with extension and trailer", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n", 201, "abcde", true, false},
		{"connection close", "HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\nConnection: close\r\n\r\n{}", 404, "{}", false, false},
		{"no length: to the end", "HTTP/1.1 200 OK\r\n\r\nuntil eof", 200, "until eof", false, false},
		{"204 has no body", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", true, false},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, "x", false, false},
		{"garbage", "SSH-2.0-OpenSSH\r\n\r\n", 0, "", false, true},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 200, "", false, true},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", 200, "abc", false, true},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 200, "", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body, keep, err := readResponse(bufio.NewReader(strings.NewReader(tc.raw)), nil)
			if (err != nil) != tc.fail {
				t.Fatalf("err = %v, want failure %v", err, tc.fail)
			}
			if tc.fail {
				return
			}
			if status != tc.status || string(body) != tc.body || keep != tc.keep {
				t.Errorf("got %d %q keep=%v, want %d %q keep=%v", status, body, keep, tc.status, tc.body, tc.keep)
			}
		})
	}
}

// The load generator's connection against net/http's server: keep-alive
// reuse, bodies small and large (chunked), and a server that closes.
func TestConnAgainstNetHTTP(t *testing.T) {
	t.Parallel()
	var opened atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big": // larger than net/http's buffer: sent chunked
			w.Write([]byte(strings.Repeat("x", 100000)))
		case "/close":
			w.Header().Set("Connection", "close")
			fmt.Fprint(w, "bye")
		default:
			fmt.Fprintf(w, "%s %s", r.Method, r.Header.Get("core-domain"))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	c := newConn(host, 5*time.Second)
	defer c.close()
	send := func(path string) (int, string) {
		t.Helper()
		req, _ := newRequest(host, "GET", mustTemplate(path), nil, nil, [][2]string{{"core-domain", "d.test"}}).build(nil, nil, values{})
		status, body, err := c.roundTrip(req, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return status, string(body)
	}
	for range 3 {
		if status, body := send("/"); status != 200 || body != "GET d.test" {
			t.Fatalf("GET /: %d %q", status, body)
		}
	}
	if _, body := send("/big"); len(body) != 100000 {
		t.Fatalf("GET /big: %d bytes, want 100000", len(body))
	}
	if n := opened.Load(); n != 1 {
		t.Errorf("%d connections for 4 requests, want 1 (keep-alive)", n)
	}
	if _, body := send("/close"); body != "bye" {
		t.Fatalf("GET /close: %q", body)
	}
	if status, _ := send("/"); status != 200 || opened.Load() != 2 {
		t.Errorf("after Connection: close: status %d, %d connections, want a second one", status, opened.Load())
	}
}

func TestRunLoadCountsAndFailures(t *testing.T) {
	t.Parallel()
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%10 == 0 {
			http.Error(w, "tenth", http.StatusTeapot)
			return
		}
		fmt.Fprint(w, r.URL.Path)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	req := newRequest(host, "GET", mustTemplate("/{id}/{n}"), nil, []string{"a", "b"}, nil)
	res, err := runLoad(t.Context(), loadSpec{addr: host, req: req, n: 100, conc: 4, timeout: 5 * time.Second, seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.requests != 100 || res.non2xx != 10 || res.errors != 0 || res.hist.count() != 100 {
		t.Errorf("requests %d, non-2xx %d, errors %d, recorded %d; want 100, 10, 0, 100", res.requests, res.non2xx, res.errors, res.hist.count())
	}
	if !strings.Contains(res.firstBad, "HTTP 418") {
		t.Errorf("first failure %q, want the 418", res.firstBad)
	}
	if int(served.Load()) != 100 {
		t.Errorf("the server saw %d requests, want exactly 100", served.Load())
	}
}
