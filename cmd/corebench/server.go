package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// serverOpts say which cored to measure: one the harness builds and starts
// (the default), or a running one (--target).
type serverOpts struct {
	target     string // base URL of a running cored
	adminToken string // its admin token
	pid        int    // its process id, for CPU and memory (optional)

	src      string // the Core checkout to build cored from
	coredBin string // a built cored instead
	mongoURI string
	logLevel string
	// ferretDB starts the tests' MongoDB-wire server and cored on it.
	ferretDB bool
	// ferretPG is the PostgreSQL database FerretDB stores in instead of
	// SQLite (with ferretDB).
	ferretPG string
	// processes is the number of cored processes started on one port
	// (--reuse-port); 1 by default.
	processes int

	serverCPUs, loadCPUs string
	noPin                bool
	keep                 bool // keep the work directory (binary, data, logs)
	// profile is a directory to write a CPU profile of each scenario to
	// (cored started with --debug-addr); "" for none.
	profile string

	// allowed are the CPUs this process could use when it started, read
	// before it pins itself (a second server of `scale` is pinned the
	// same way as the first).
	allowed    []int
	allowedErr error
}

// readAllowed records the CPUs this process may use; call it before
// starting the first server.
func (o *serverOpts) readAllowed() {
	o.allowed, o.allowedErr = allowedCPUs()
}

func (o *serverOpts) register(fs *flag.FlagSet) {
	fs.StringVar(&o.target, "target", "", "base URL of a running cored to measure instead of starting one (http://127.0.0.1:8080); needs --admin-token")
	fs.StringVar(&o.adminToken, "admin-token", "", "admin token of the --target server (default $CORE_ADMIN_TOKEN)")
	fs.IntVar(&o.pid, "pid", 0, "process id of the --target server, to measure its CPU and memory (optional)")
	fs.StringVar(&o.src, "src", ".", "the Core checkout (or a directory inside it) to build cored from with go build")
	fs.StringVar(&o.coredBin, "cored", "", "a built cored binary to start instead of building one")
	fs.StringVar(&o.mongoURI, "mongo-uri", "", "start cored on this MongoDB (cored serve --mongo-uri) instead of the embedded store")
	fs.BoolVar(&o.ferretDB, "ferretdb", false, "start the MongoDB-wire test server of the tests (tools/ferretdb: FerretDB over SQLite, pinned with the load generator) and cored on it")
	fs.StringVar(&o.ferretPG, "ferretdb-postgresql", "", "with --ferretdb: FerretDB stores in this PostgreSQL database (postgres://…) instead of SQLite files; its indexes serve more than an _id lookup, and it takes concurrent writes")
	fs.IntVar(&o.processes, "processes", 1, "cored processes to start on one port with --reuse-port (Linux); with more than one, process i is pinned to the i-th CPU of --server-cpus (cycling). Use with --mongo-uri or --ferretdb")
	fs.StringVar(&o.logLevel, "log-level", "info", "cored's --log-level (info logs one line per request, as in production)")
	fs.StringVar(&o.serverCPUs, "server-cpus", "", "CPUs to pin the server to with taskset -c (default: the first CPU this process may use)")
	fs.StringVar(&o.loadCPUs, "load-cpus", "", "CPUs to pin the load generator to (default: the other CPUs)")
	fs.BoolVar(&o.noPin, "no-pin", false, "pin neither the server nor the load generator")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (cored binary, data, cored.log) after the run")
	fs.StringVar(&o.profile, "profile", "", "write a CPU profile of each scenario (its first 5 s, from cored's --debug-addr) to <dir>/<scenario>.pprof")
}

// server is the cored under measurement.
type server struct {
	base       string // http://host:port
	host       string // host:port
	adminToken string
	// pid is the server's process id; 0 when unknown (then CPU and
	// memory are not measured).
	pid int
	// extra are the process ids of the other processes (--processes).
	extra   []int
	version string // cored's VCS revision (+dirty), Go version
	store   string // what it stores into
	pinning string // how server and load generator were pinned
	// debug is host:port of the profiler of a server started with
	// --profile; "" otherwise.
	debug      string
	profileDir string
	// exited is closed when a server the harness started exits.
	exited chan struct{}
	dir    string // work directory ("" for a target)
	log    string // cored's stderr, when started here
	// failed keeps the work directory at stop, for a look at cored.log.
	failed bool
	stopFn func() error
	// stopFerret stops the FerretDB started with --ferretdb.
	stopFerret func() error
	// aux are the process ids of what the server needs besides itself
	// (FerretDB), left out of "other processes".
	aux []int
}

// pids are the server's process ids (none when unknown).
func (s *server) pids() []int {
	if s.pid <= 0 {
		return nil
	}
	return append([]int{s.pid}, s.extra...)
}

// alive reports whether the server still runs, as far as we can tell.
func (s *server) alive() bool {
	if s.exited != nil {
		select {
		case <-s.exited:
			return false
		default:
		}
	}
	for _, p := range s.pids() {
		if !procAlive(p) {
			return false
		}
	}
	return true
}

// stop stops a server the harness started (SIGTERM, then SIGKILL after
// 15 s) and removes the work directory unless keep; for a target it does
// nothing.
func (s *server) stop() error {
	if s.stopFn == nil {
		return nil
	}
	err := s.stopFn()
	s.stopFn = nil
	return err
}

// startServer builds and starts cored, or checks the target.
func startServer(ctx context.Context, o serverOpts, p *progress) (*server, error) {
	if o.target != "" {
		return useTarget(ctx, o, p)
	}
	dir, err := os.MkdirTemp("", "corebench-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, log: filepath.Join(dir, "cored.log")}
	ok := false
	defer func() {
		if !ok {
			p.printf("work directory kept for a look: %s", dir)
		}
	}()

	bin, root := o.coredBin, ""
	if bin == "" {
		var err error
		root, err = moduleRoot(o.src)
		if err != nil {
			return nil, err
		}
		bin = filepath.Join(dir, "cored")
		p.printf("building cored: go build -o %s ./cmd/cored (in %s)", bin, root)
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cored")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/cored in %s failed: %v\n%s", root, err, out)
		}
	}
	s.version = binaryVersion(bin)
	if root != "" && strings.HasPrefix(s.version, "no-vcs") { // built with -buildvcs=false (GOFLAGS)
		s.version = gitVersion(root) + strings.TrimPrefix(s.version, "no-vcs")
	}

	token := randomHex(24)
	s.adminToken = token
	srvCPUs, loadCPUs, pinning, err := planPinning(o)
	if err != nil {
		return nil, err
	}
	s.pinning = pinning

	// A port of our choosing for processes sharing one port (bound by
	// each with SO_REUSEPORT), and when cored will not log where it
	// listens (the "listening" line is at info): then launch waits for
	// the port to take a connection (with several processes, the first
	// one's may answer for the next; the wait for all of them to serve
	// the instance follows).
	addr, known := "127.0.0.1:0", ""
	quiet := o.logLevel != "info" && o.logLevel != "debug"
	if o.processes > 1 || quiet {
		if addr, err = freePort(); err != nil {
			return nil, err
		}
	}
	if quiet {
		known = addr
	}
	args := []string{bin, "serve", "--addr", addr, "--log-level", o.logLevel}
	s.store = "embedded (bolt)"
	if o.processes > 1 {
		args = append(args, "--reuse-port")
	}
	mongoURI := o.mongoURI
	if o.ferretDB {
		var stopFerret func() error
		var ferretPID int
		if mongoURI, ferretPID, stopFerret, err = startFerretDB(ctx, dir, o.ferretPG, loadCPUs, p); err != nil {
			return nil, err
		}
		s.aux = append(s.aux, ferretPID)
		s.stopFerret = stopFerret
	}
	if mongoURI != "" {
		args = append(args, "--mongo-uri", mongoURI)
		// The processes on one database share one key file, made by the
		// binary measured (a version before the key ring has no `keys`
		// command, and needs none).
		keys := filepath.Join(dir, "core.keys")
		if exec.Command(bin, "keys", "init", "--key-file", keys).Run() == nil {
			args = append(args, "--key-file", keys)
		}
		s.store = "MongoDB"
		if o.ferretDB {
			s.store = "MongoDB wire: FerretDB v1.24 over SQLite (the tests' server), pinned with the load generator; its CPU is in no column"
			if o.ferretPG != "" {
				s.store = "MongoDB wire: FerretDB v1.24 over PostgreSQL, both pinned with the load generator; their CPU is in no column"
			}
		}
	}
	if o.profile != "" {
		if s.debug, err = freePort(); err != nil {
			return nil, err
		}
		s.profileDir = o.profile
	}
	var exits []chan struct{}
	for i := range max(1, o.processes) {
		data := filepath.Join(dir, "data")
		if i > 0 {
			data += fmt.Sprintf("-%d", i+1) // unused on MongoDB
		}
		a := append(slices.Clone(args), "--data", data)
		if i == 0 && s.debug != "" { // the first process is profiled
			a = append(a, "--debug-addr", s.debug)
		}
		if len(srvCPUs) > 0 {
			cpus := srvCPUs
			if o.processes > 1 {
				cpus = srvCPUs[i%len(srvCPUs) : i%len(srvCPUs)+1]
			}
			a = append([]string{"taskset", "-c", formatCPUs(cpus)}, a...)
		}
		logPath := s.log
		if i > 0 {
			logPath = filepath.Join(dir, fmt.Sprintf("cored-%d.log", i+1))
		}
		pr, err := launch(ctx, a, token, logPath, known)
		if err != nil {
			s.failed = true
			_ = s.stop()
			return nil, err
		}
		if i == 0 {
			s.pid = pr.pid
			s.host, s.base = pr.addr, "http://"+pr.addr
		} else {
			s.extra = append(s.extra, pr.pid)
		}
		exits = append(exits, pr.exited)
		prev := s.stopFn
		s.stopFn = func() error { // the last started stops first
			err := pr.stop()
			if prev != nil {
				err = errors.Join(err, prev())
			}
			return err
		}
	}
	s.exited = make(chan struct{})
	var exitOnce sync.Once
	for _, e := range exits { // any process exiting ends the run
		go func() {
			<-e
			exitOnce.Do(func() { close(s.exited) })
		}()
	}
	if o.processes > 1 {
		s.store += fmt.Sprintf("; %d cored processes on one port (--reuse-port)", o.processes)
	}
	stopAll := s.stopFn
	s.stopFn = func() error {
		err := stopAll()
		if s.stopFerret != nil {
			err = errors.Join(err, s.stopFerret())
		}
		if !o.keep && !s.failed && err == nil {
			err = os.RemoveAll(dir)
		}
		return err
	}
	fail := func(err error) (*server, error) {
		s.failed = true
		_ = s.stopFn() // the start already failed; that error is the one to report
		return nil, fmt.Errorf("%w\nlast lines of %s:\n%s", err, s.log, tail(s.log, 20))
	}
	if err := waitHealthy(ctx, s, 30*time.Second); err != nil {
		return fail(err)
	}
	if len(loadCPUs) > 0 {
		if err := pinSelf(loadCPUs); err != nil {
			return fail(fmt.Errorf("pinning the load generator to CPUs %s: %w", formatCPUs(loadCPUs), err))
		}
		procs := runtime.GOMAXPROCS(len(loadCPUs))
		stopServer := s.stopFn
		s.stopFn = func() error { // unpin, so that the next server is pinned the same way
			err := stopServer()
			if perr := pinSelf(o.allowed); perr != nil {
				err = errors.Join(err, perr)
			}
			runtime.GOMAXPROCS(procs)
			return err
		}
	}
	p.printf("cored %s listening on %s (pid %d, store %s; %s)", s.version, s.host, s.pid, s.store, s.pinning)
	ok = true
	return s, nil
}

// useTarget checks a running server given by --target.
func useTarget(ctx context.Context, o serverOpts, p *progress) (*server, error) {
	u, err := url.Parse(strings.TrimRight(o.target, "/"))
	if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, usageError{fmt.Sprintf("--target %q: want http://host:port (the load generator speaks plain HTTP/1.1)", o.target)}
	}
	token := o.adminToken
	if token == "" {
		token = os.Getenv("CORE_ADMIN_TOKEN")
	}
	if token == "" {
		return nil, usageError{"--target needs --admin-token (or $CORE_ADMIN_TOKEN)"}
	}
	s := &server{base: u.Scheme + "://" + u.Host, host: u.Host, adminToken: token, pid: o.pid,
		version: "(running server)", store: "(as configured)", pinning: "server not pinned by corebench"}
	if o.pid > 0 {
		if !procAlive(o.pid) {
			return nil, usageError{fmt.Sprintf("--pid %d: no such process", o.pid)}
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", o.pid)); err == nil {
			s.version = binaryVersion(exe)
		}
	}
	if o.loadCPUs != "" && !o.noPin {
		cpus, err := parseCPUs(o.loadCPUs)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		if err := pinSelf(cpus); err != nil {
			return nil, err
		}
		runtime.GOMAXPROCS(len(cpus))
		s.pinning += "; load generator on CPUs " + formatCPUs(cpus)
	}
	if err := waitHealthy(ctx, s, 10*time.Second); err != nil {
		return nil, err
	}
	p.printf("target %s (pid %d, %s)", s.base, s.pid, s.version)
	return s, nil
}

// planPinning decides the CPUs of the server and of the load generator:
// by default the server gets the first CPU this process may use and the
// load generator the others, as ../shared/bench does (server on CPU 0 with
// taskset, so Go gives it GOMAXPROCS 1; wrk on CPU 1).
func planPinning(o serverOpts) (srv, load []int, desc string, err error) {
	if o.noPin {
		return nil, nil, "not pinned (--no-pin)", nil
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return nil, nil, "not pinned: taskset not found (apt-get install util-linux)", nil
	}
	allowed := o.allowed
	if o.allowedErr != nil {
		return nil, nil, "not pinned: " + o.allowedErr.Error(), nil
	}
	if o.serverCPUs != "" {
		if srv, err = parseCPUs(o.serverCPUs); err != nil {
			return nil, nil, "", usageError{err.Error()}
		}
	} else if len(allowed) > 0 {
		srv = allowed[:1]
	}
	if o.loadCPUs != "" {
		if load, err = parseCPUs(o.loadCPUs); err != nil {
			return nil, nil, "", usageError{err.Error()}
		}
	} else {
		for _, c := range allowed {
			if !slices.Contains(srv, c) {
				load = append(load, c)
			}
		}
	}
	if len(srv) == 0 || len(load) == 0 {
		return nil, nil, fmt.Sprintf("not pinned: %d CPU(s) available, pinning needs two", len(allowed)), nil
	}
	return srv, load, fmt.Sprintf("server pinned to CPU %s with taskset, load generator to CPU %s", formatCPUs(srv), formatCPUs(load)), nil
}

// waitHealthy waits until GET /healthz answers 200.
func waitHealthy(ctx context.Context, s *server, within time.Duration) error {
	deadline := time.Now().Add(within)
	hc := &http.Client{Timeout: 2 * time.Second}
	var last string
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/healthz", nil)
		if err != nil {
			return err
		}
		res, err := hc.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			last = res.Status
		} else {
			last = err.Error()
		}
		if !s.alive() {
			return errors.New("cored exited before GET /healthz answered 200")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("GET %s/healthz did not answer 200 within %v (last: %s)", s.base, within, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// moduleRoot finds the Core module around dir.
func moduleRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			first, _, _ := strings.Cut(string(b), "\n")
			if strings.TrimSpace(first) == "module github.com/corehq/core" {
				return d, nil
			}
		}
		up := filepath.Dir(d)
		if up == d {
			return "", usageError{fmt.Sprintf("no Core checkout (go.mod of github.com/corehq/core) at or above %s: run from the repository, or pass --src or --cored", dir)}
		}
		d = up
	}
}

// binaryVersion describes a Go binary by its VCS stamp: "0123456789ab+dirty
// (go1.26.8)".
func binaryVersion(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		rev = "no-vcs"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev + " (" + bi.GoVersion + ")"
}

// gitVersion describes a checkout: its HEAD and whether the work tree
// (cmd/corebench aside) differs from it (read-only git commands; "no-vcs"
// without git).
func gitVersion(dir string) string {
	head, err := exec.Command("git", "-C", dir, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "no-vcs"
	}
	v := strings.TrimSpace(string(head))
	// The harness's own files do not change what is measured.
	status, err := exec.Command("git", "--no-optional-locks", "-C", dir, "status", "--porcelain", "--", ".", ":(exclude)cmd/corebench").Output()
	if err == nil && len(bytes.TrimSpace(status)) > 0 {
		v += "+uncommitted"
	}
	return v
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// progress writes timestamped progress lines (to stderr).
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progress) printf(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// usageError is a problem with the command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
