package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

// healthcheck asks a running server's /healthz and fails unless it
// answers 200: the container image's HEALTHCHECK, which has no shell or
// curl to ask with.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr(getenv, "CORE_ADDR", "127.0.0.1:8080"), "the server's address, as given to serve --addr ($CORE_ADDR)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+loopback(*addr)+"/healthz", nil)
	if err != nil {
		return usageError{fmt.Sprintf("--addr %q: %v", *addr, err)}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("/healthz answered %s", res.Status)
	}
	return nil
}

// loopback turns a listen address into one to dial: an empty or
// wildcard host ("", "0.0.0.0", "::") is this machine.
func loopback(addr string) string {
	for _, wild := range []string{"0.0.0.0:", "[::]:", ":"} {
		if len(addr) >= len(wild) && addr[:len(wild)] == wild {
			return "127.0.0.1:" + addr[len(wild):]
		}
	}
	return addr
}
