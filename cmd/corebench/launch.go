package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corehq/core/internal/ferretdb"
	"github.com/corehq/core/internal/toolbin"
)

// proc is a process the harness started.
type proc struct {
	pid    int
	addr   string        // the address it logged it listens on ("" for FerretDB)
	exited chan struct{} // closed when it exits
	stop   func() error  // SIGTERM, then SIGKILL after 15 s
}

// launch starts `cored serve` (args, perhaps behind taskset) with the
// admin token in its environment, its stdout beside logPath and its
// stderr in logPath, and waits for the address it logs it listens on,
// or, when addr is known (cored was given it), for addr to take a
// connection (a log level above info hides the line).
func launch(ctx context.Context, args []string, token, logPath, addr string) (*proc, error) {
	cmd := exec.Command(args[0], args[1:]...)
	dieWithUs(cmd)
	// The admin token goes by the environment, not the command line; other
	// CORE_ settings of this shell stay out of the run.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "CORE_") }),
		"CORE_ADMIN_TOKEN="+token)
	stdout, err := os.Create(strings.TrimSuffix(logPath, ".log") + ".out")
	if err != nil {
		return nil, err
	}
	cmd.Stdout = stdout
	logFile, err := os.Create(logPath)
	if err != nil {
		stdout.Close()
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		stdout.Close()
		logFile.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		stdout.Close()
		logFile.Close()
		return nil, fmt.Errorf("starting cored: %w", err)
	}
	pr := &proc{pid: cmd.Process.Pid, exited: make(chan struct{})} // taskset execs cored in place: the same process
	addrCh := make(chan string, 1)
	copied := make(chan struct{})
	go func() { // the log, and the address cored listens on
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Bytes()
			_, _ = logFile.Write(append(line, '\n')) // a lost log line is no reason to stop a benchmark
			if found {
				continue
			}
			var m struct{ Msg, Addr string }
			if json.Unmarshal(line, &m) == nil && m.Msg == "listening" && m.Addr != "" {
				found = true
				select {
				case addrCh <- m.Addr:
				default: // the dialer below found it first
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	if addr != "" {
		go func() {
			for {
				select {
				case <-pr.exited:
					return
				case <-ctx.Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
				if c, err := net.Dial("tcp", addr); err == nil {
					c.Close()
					select {
					case addrCh <- addr:
					default: // the log line came first
					}
					return
				}
			}
		}()
	}
	var waitErr error
	go func() {
		<-copied // Wait closes the pipe: read it to the end first
		waitErr = cmd.Wait()
		stdout.Close()
		logFile.Close()
		close(pr.exited)
	}()
	pr.stop = stopper(cmd, pr.exited)
	fail := func(err error) (*proc, error) {
		_ = pr.stop() // the start already failed; that error is the one to report
		return nil, fmt.Errorf("%w\nlast lines of %s:\n%s", err, logPath, tail(logPath, 20))
	}
	select {
	case pr.addr = <-addrCh:
		return pr, nil
	case <-pr.exited:
		return fail(fmt.Errorf("cored exited before listening: %v", waitErr))
	case <-time.After(60 * time.Second):
		return fail(errors.New("cored did not start listening within 60 s"))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
}

// stopper returns a function that stops cmd (SIGTERM, then SIGKILL after
// 15 s) once and waits for exited.
func stopper(cmd *exec.Cmd, exited <-chan struct{}) func() error {
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM) // fails only when it already exited
			select {
			case <-exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
				err = fmt.Errorf("%s did not stop within 15 s of SIGTERM; killed", filepath.Base(cmd.Path))
			}
		})
		return err
	}
}

// startFerretDB builds (or takes from the cache) the MongoDB-wire test
// server of the tests (tools/ferretdb: FerretDB v1.24 over SQLite, as
// store/mongo/mongotest starts it), starts it on a free loopback port
// with its files under dir (or, with pg, in that PostgreSQL database),
// pinned to cpus when given, and returns its URI, its process id and a
// function that stops it.
func startFerretDB(ctx context.Context, dir, pg string, cpus []int, p *progress) (uri string, pid int, stop func() error, err error) {
	p.printf("building the MongoDB-wire test server (tools/ferretdb; cached after the first build, which takes minutes)")
	bin, err := toolbin.Build("ferretdb", "build", "-trimpath", ".")
	if err != nil {
		return "", 0, nil, err
	}
	args := []string{bin, "-dir", filepath.Join(dir, "ferretdb")}
	if err := os.MkdirAll(args[2], 0o755); err != nil {
		return "", 0, nil, err
	}
	if pg != "" {
		args = append(args, "-postgresql", pg)
	}
	if len(cpus) > 0 {
		args = append([]string{"taskset", "-c", formatCPUs(cpus)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	dieWithUs(cmd)
	logPath := filepath.Join(dir, "ferretdb.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", 0, nil, err
	}
	cmd.Stderr = logFile
	proc, err := ferretdb.Start(ctx, cmd)
	if err != nil {
		logFile.Close()
		return "", 0, nil, fmt.Errorf("%w:\n%s", err, tail(logPath, 20))
	}
	go func() { <-proc.Exited; logFile.Close() }()
	kill := stopper(cmd, proc.Exited)
	stop = func() error { proc.Stop(); return kill() }
	uri = proc.URI
	p.printf("FerretDB at %s (pid %d%s)", uri, cmd.Process.Pid, map[bool]string{true: ", CPU " + formatCPUs(cpus), false: ""}[len(cpus) > 0])
	return uri, cmd.Process.Pid, stop, nil
}
