package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
)

// profileSeconds is how long each scenario's CPU profile runs: the
// shortest scenarios (20,000 GETs) last about that long.
const profileSeconds = 5

// profile starts a CPU profile of the server for the scenario name and
// returns a function that waits for it and writes it to
// <profileDir>/<name>.pprof (read it with `go tool pprof`). Without
// --profile it does nothing.
func (s *server) profile(ctx context.Context, name string, p *progress) (wait func()) {
	if s.debug == "" || s.profileDir == "" {
		return func() {}
	}
	done := make(chan error, 1)
	path := filepath.Join(s.profileDir, name+".pprof")
	go func() { done <- fetchProfile(ctx, s.debug, path) }()
	return func() {
		if err := <-done; err != nil {
			p.printf("  profile of %s: %v", name, err)
			return
		}
		p.printf("  profile: go tool pprof -top %s", path)
	}
}

func fetchProfile(ctx context.Context, debug, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", debug, profileSeconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// freePort returns a loopback host:port nothing listens on right now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}
