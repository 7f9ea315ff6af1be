package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Two servers started with --reuse-port bind one port and both answer on
// it; once the first stops, the second serves every connection. Without
// the flag, a second server cannot bind the port.
func TestServeReusePort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().String()
	ln.Close()

	a, addrA, logsA, restA := startListening(t, "--addr", port, "--reuse-port")
	if addrA != port {
		t.Fatalf("first server: listening on %q, want %s:\n%s", addrA, port, logsA)
	}
	b, addrB, logsB, restB := startListening(t, "--addr", port, "--reuse-port")
	if addrB != port {
		t.Fatalf("second server with --reuse-port: listening on %q, want %s:\n%s", addrB, port, logsB)
	}
	c, addrC, logsC, restC := startListening(t, "--addr", port)
	if addrC != "" {
		t.Errorf("a third server without --reuse-port listens on %s too", addrC)
	}
	for restC.Scan() {
		logsC.WriteString(restC.Text() + "\n")
	}
	if err := c.Wait(); err == nil || !strings.Contains(logsC.String(), "address already in use") {
		t.Errorf("a server without --reuse-port on a taken port: %v, want it to fail with \"address already in use\":\n%s", err, logsC)
	}

	// A new connection each time: the kernel picks one of the two
	// listeners by the connection's source port, so 64 connections all
	// reaching the same one would happen once in 2^63 runs.
	get := func() {
		t.Helper()
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := hc.Get("http://" + port + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /healthz: %s", res.Status)
		}
	}
	for range 64 {
		get()
	}
	if log := stopAndLog(t, a, logsA, restA); !strings.Contains(log, `"path":"/healthz"`) {
		t.Errorf("the first server answered none of 64 connections:\n%s", log)
	}
	for range 8 {
		get() // the second one alone now
	}
	if log := stopAndLog(t, b, logsB, restB); strings.Count(log, `"path":"/healthz"`) < 8 {
		t.Errorf("the second server answered fewer than the 8 requests sent after the first stopped:\n%s", log)
	}
}
