// Package ferretdb starts the MongoDB-wire test server (tools/ferretdb:
// FerretDB over SQLite) for the tests (store/mongo/mongotest) and the load
// harness (cmd/corebench -ferretdb): it prints its connection string as
// its first line and stops at the end of its standard input.
package ferretdb

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// startTimeout bounds the wait for the connection string.
const startTimeout = 60 * time.Second

// Process is a running FerretDB.
type Process struct {
	// URI is the connection string it printed.
	URI string
	// Cmd is its command, started.
	Cmd *exec.Cmd
	// Exited is closed once it has exited (and Cmd.Wait returned).
	Exited <-chan struct{}
	stdin  io.WriteCloser
}

// Start starts cmd, the ferretdb binary with its flags (the caller sets
// its Stderr and anything else it needs), and waits for the connection
// string it prints first: at most a minute, or until ctx ends. When none
// comes, the process is killed and the error quotes what came instead.
func Start(ctx context.Context, cmd *exec.Cmd) (*Process, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	exited := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		lines <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, r)
		_ = cmd.Wait()
		close(exited)
	}()
	var uri string
	select {
	case uri = <-lines:
	case <-time.After(startTimeout):
	case <-ctx.Done():
	}
	if !strings.HasPrefix(uri, "mongodb://") {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		<-exited
		return nil, fmt.Errorf("FerretDB did not start (first line %q)", uri)
	}
	return &Process{URI: uri, Cmd: cmd, Exited: exited, stdin: stdin}, nil
}

// Stop closes its standard input, which ends it; it does not wait (see
// Exited).
func (p *Process) Stop() { _ = p.stdin.Close() }
