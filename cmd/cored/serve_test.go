package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/corehq/core/keyring"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// TestMain lets a test run the real binary: the test binary re-executed
// with CORED_TEST_MAIN=1 is cored.
func TestMain(m *testing.M) {
	if os.Getenv("CORED_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(mongotest.Main(m))
}

func TestParseServe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want serveFlags
	}{
		{"defaults", nil, nil,
			serveFlags{addr: "127.0.0.1:8080", data: "./data", logLevel: "info", bodyLimit: "1MiB", requestTimeout: "30s", functionMemory: "64MiB", functionMemoryMax: "256MiB", gcPercent: 200, backupKeep: 7, fileSweepAge: "1h"}},
		{"environment", nil, map[string]string{
			"CORE_ADDR": ":9000", "CORE_DATA_DIR": "/var/core", "CORE_MONGO_URI": "mongodb://db", "CORE_ADMIN_TOKEN": "from-env",
			"CORE_LOG_LEVEL": "debug", "CORE_BODY_LIMIT": "2MiB", "CORE_REQUEST_TIMEOUT": "5s", "CORE_TRUSTED_PROXIES": "10.0.0.0/8",
			"CORE_FUNCTION_MEMORY": "32MiB", "CORE_FUNCTION_MEMORY_MAX": "1GiB", "CORE_GC_PERCENT": "300",
			"CORE_BACKUP_EVERY": "6h", "CORE_BACKUP_KEEP": "3", "CORE_FILE_SWEEP_AGE": "10m",
		}, serveFlags{addr: ":9000", data: "/var/core", mongoURI: "mongodb://db", adminToken: "from-env", logLevel: "debug", bodyLimit: "2MiB", requestTimeout: "5s", trustedProxies: "10.0.0.0/8",
			functionMemory: "32MiB", functionMemoryMax: "1GiB", gcPercent: 300, backupEvery: "6h", backupKeep: 3, fileSweepAge: "10m"}},
		{"flags win over the environment", []string{
			"--addr", ":7000", "--data", "d", "--mongo-uri", "mongodb://flag", "--admin-token", "from-flag",
			"--log-level", "warn", "--body-limit", "10KiB", "--demo", "--request-timeout", "1m", "--function-memory", "128MiB", "--gc-percent", "150", "--file-sweep-age", "0s",
		}, map[string]string{"CORE_ADDR": ":9000", "CORE_ADMIN_TOKEN": "from-env", "CORE_MONGO_URI": "mongodb://db", "CORE_FUNCTION_MEMORY": "32MiB", "CORE_GC_PERCENT": "300"},
			serveFlags{addr: ":7000", data: "d", mongoURI: "mongodb://flag", adminToken: "from-flag", adminTokenInArgs: true, logLevel: "warn", bodyLimit: "10KiB", requestTimeout: "1m", demo: true,
				functionMemory: "128MiB", functionMemoryMax: "256MiB", gcPercent: 150, backupKeep: 7, fileSweepAge: "0s"}},
		{"profiler", []string{"--debug-addr", "127.0.0.1:6060"}, nil,
			serveFlags{addr: "127.0.0.1:8080", data: "./data", logLevel: "info", bodyLimit: "1MiB", requestTimeout: "30s", debugAddr: "127.0.0.1:6060", functionMemory: "64MiB", functionMemoryMax: "256MiB", gcPercent: 200, backupKeep: 7, fileSweepAge: "1h"}},
		{"profiler from the environment", nil, map[string]string{"CORE_DEBUG_ADDR": "[::1]:6060"},
			serveFlags{addr: "127.0.0.1:8080", data: "./data", logLevel: "info", bodyLimit: "1MiB", requestTimeout: "30s", debugAddr: "[::1]:6060", functionMemory: "64MiB", functionMemoryMax: "256MiB", gcPercent: 200, backupKeep: 7, fileSweepAge: "1h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseServe(tc.args, env(tc.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(serveFlags{})); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"1048576": 1 << 20, "1MiB": 1 << 20, "1M": 1 << 20, "512KiB": 512 << 10, "512k": 512 << 10,
		"2 GiB": 2 << 30, "100B": 100, "": -1, "0": -1, "-5": -1, "1TiB": -1, "MiB": -1, "1.5MiB": -1, "99999999999G": -1,
	} {
		got, err := parseSize(in)
		if want < 0 && err == nil || want >= 0 && (err != nil || got != want) {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestServeRefusesBadSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"mongo", []string{"--mongo-uri", "mongodb://localhost", "--key-file", "{dir}/shared.keys"}, 1, "MongoDB store is not available"},
		{"log level", []string{"--log-level", "loud"}, 2, "--log-level"},
		{"body limit", []string{"--body-limit", "lots"}, 2, "--body-limit"},
		{"file sweep age", []string{"--file-sweep-age", "-1h"}, 2, `--file-sweep-age: "-1h" is not a duration`},
		{"short admin token", []string{"--admin-token", "abc"}, 1, "at least 16 characters"},
		{"arguments", []string{"now"}, 2, "serve takes no arguments"},
		{"public profiler", []string{"--debug-addr", "0.0.0.0:6060"}, 2, "loopback addresses only"},
		{"profiler without port", []string{"--debug-addr", "localhost"}, 2, "loopback addresses only"},
		{"metrics on the public listener", []string{"--addr", "127.0.0.1:18080", "--metrics-addr", "127.0.0.1:18080"}, 2, "never served on the public listener"},
		{"trusted proxies", []string{"--trusted-proxies", "10.0.0.0/8,lb.local"}, 2, `--trusted proxies: "lb.local" is neither a CIDR prefix nor an address`},
		{"rate limit", []string{"--rate-limit", "fast"}, 2, `--rate-limit: "fast" is not RATE or RATE/BURST`},
		{"gc percent", []string{"--gc-percent", "5"}, 2, "--gc-percent 5: between 10 and 10000"},
		{"console on the public listener", []string{"--addr", "127.0.0.1:18080", "--console-addr", "127.0.0.1:18080"}, 2, "the console's listener is its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := keyring.CreateFile(filepath.Join(dir, "shared.keys"), keyring.Generate()); err != nil {
				t.Fatal(err)
			}
			args := []string{"serve", "--addr", "127.0.0.1:0", "--data", dir}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "{dir}", dir))
			}
			code, _, errOut := runCmd(t, env(nil), args...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, errOut, tc.code, tc.stderr)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var curlRE = regexp.MustCompile(`^curl -s (\S+)/graphql -H 'core-domain: (\S+)' -H 'authorization: (\S+)' -H 'content-type: application/json' -d '(.+)'$`)

// demoStart is what one `cored serve --demo` printed.
type demoStart struct {
	lines          []string // stdout up to the curl
	url, domain    string
	token, payload string
}

// startDemo runs `cored serve --demo` in process until the curl line is
// printed; stop ends it and returns its exit status.
func startDemo(t *testing.T, dir string) (d demoStart, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr lockedBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"serve", "--demo", "--addr", "127.0.0.1:0", "--data", dir}, env(nil), pw, &stderr)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		d.lines = append(d.lines, line)
		if m := curlRE.FindStringSubmatch(line); m != nil {
			d.url, d.domain, d.token, d.payload = m[1], m[2], m[3], m[4]
			break
		}
	}
	go io.Copy(io.Discard, pr) //nolint:errcheck // the rest of stdout is not needed
	if d.token == "" {
		cancel()
		t.Fatalf("serve --demo printed no curl (exit %d)\nstdout:\n%s\nstderr:\n%s", <-exit, strings.Join(d.lines, "\n"), stderr.String())
	}
	return d, func() int { cancel(); return <-exit }
}

// books runs the printed curl's request and returns the titles it lists.
func (d demoStart) books(t *testing.T, token string) (int, []string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.url+"/graphql", strings.NewReader(d.payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("core-domain", d.domain)
	req.Header.Set("authorization", token)
	req.Header.Set("content-type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Data struct {
			Find struct {
				Edges []struct {
					Node struct {
						Title string  `json:"title"`
						Price float64 `json:"price"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"find"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, e := range body.Data.Find.Edges {
		titles = append(titles, e.Node.Title)
	}
	return res.StatusCode, titles
}

func TestServeDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wantTitles := []string{"Wise and Otherwise", "The Old Man and His God", "Inferno", "Purgatorio", "Paradiso", "Alchemist", "Brida", "Eleven Minutes"}

	first, stop := startDemo(t, dir)
	if !strings.HasPrefix(first.lines[0], "admin token (generated on first start") {
		t.Errorf("first start does not show the generated admin token: %q", first.lines[0])
	}
	if !strings.Contains(strings.Join(first.lines, "\n"), "demo: deployed bookstore/v1 on demo.local and seeded its records") {
		t.Errorf("first start does not report the deployment:\n%s", strings.Join(first.lines, "\n"))
	}
	status, titles := first.books(t, first.token)
	if diff := cmp.Diff(wantTitles, titles); status != 200 || diff != "" {
		t.Errorf("the printed curl answers %d, titles (-want +got):\n%s", status, diff)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d after its context ended, want 0", code)
	}

	// A second start keeps the data, shows no admin token, rotates the
	// instance token.
	second, stop := startDemo(t, dir)
	defer stop()
	out := strings.Join(second.lines, "\n")
	if strings.Contains(out, "admin token") || strings.Contains(out, "deployed") {
		t.Errorf("second start re-created something:\n%s", out)
	}
	if second.token == first.token {
		t.Error("the demo token was not rotated")
	}
	if status, _ := second.books(t, first.token); status != 401 {
		t.Errorf("the previous start's token answers %d, want 401", status)
	}
	status, titles = second.books(t, second.token)
	if diff := cmp.Diff(wantTitles, titles); status != 200 || diff != "" {
		t.Errorf("after a restart the curl answers %d, titles (-want +got):\n%s", status, diff)
	}
}

// TestServeDrainsOnSIGTERM runs the real binary and stops it with SIGTERM.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	cmd, addr, logs, rest := startListening(t, "--addr", "127.0.0.1:0")
	if addr == "" {
		t.Fatalf("no listening line:\n%s", logs)
	}
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("/healthz: %d", res.StatusCode)
	}
	all := stopAndLog(t, cmd, logs, rest)
	for _, want := range []string{`"msg":"shutting down: draining requests in flight"`, `"msg":"stopped"`, `"path":"/healthz"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the log lacks %s:\n%s", want, all)
		}
	}
}

// TestServeConsoleAddr: with --console-addr the console is served on its
// own listener and not on --addr (hostile checklist 51: the origin that
// holds the admin token serves no tenant content).
func TestServeConsoleAddr(t *testing.T) {
	t.Parallel()
	cmd, addr, logs, rest := startListening(t, "--addr", "127.0.0.1:0", "--console-addr", "127.0.0.1:0")
	var consoleAddr string
	for _, l := range strings.Split(logs.String(), "\n") {
		var line struct{ Msg, Addr string }
		if json.Unmarshal([]byte(l), &line) == nil && line.Msg == "console listening" {
			consoleAddr = line.Addr
		}
	}
	if addr == "" || consoleAddr == "" {
		t.Fatalf("no listening lines:\n%s", logs)
	}
	get := func(base, path string) (int, string) {
		t.Helper()
		res, err := http.Get("http://" + base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode, res.Header.Get("Content-Security-Policy")
	}
	if status, csp := get(consoleAddr, "/console/"); status != 200 || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("the console listener's /console/: %d %q, want 200 with the console's policy", status, csp)
	}
	if status, _ := get(addr, "/console/"); status != 404 {
		t.Errorf("--addr's /console/: %d, want 404", status)
	}
	if status, _ := get(addr, "/healthz"); status != 200 {
		t.Errorf("--addr's /healthz: %d", status)
	}
	all := stopAndLog(t, cmd, logs, rest)
	if !strings.Contains(all, `"msg":"stopped"`) {
		t.Errorf("no clean stop:\n%s", all)
	}
}

// startListening starts cored serve with args and returns it once it logs
// its listening address, with that address and its log so far; the
// process is killed when the test ends if it still runs.
func startListening(t *testing.T, args ...string) (cmd *exec.Cmd, addr string, logs *strings.Builder, rest *bufio.Scanner) {
	t.Helper()
	cmd = exec.Command(os.Args[0], append([]string{"serve", "--data", t.TempDir(), "--admin-token", "serve-test-admin-token"}, args...)...)
	cmd.Env = append(os.Environ(), "CORED_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // a no-op once it exited
	logs = &strings.Builder{}
	sc := bufio.NewScanner(stderr)
	for addr == "" && sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
			addr = line.Addr
		}
	}
	return cmd, addr, logs, sc
}

// stopAndLog stops cored with SIGTERM and returns its whole log (the
// request log is flushed at shutdown).
func stopAndLog(t *testing.T, cmd *exec.Cmd, logs *strings.Builder, rest *bufio.Scanner) string {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for rest.Scan() {
		logs.WriteString(rest.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("cored after SIGTERM: %v\n%s", err, logs)
	}
	return logs.String()
}

// TestServeDebug checks that the profiler answers on its own listener and
// stops with its context.
func TestServeDebug(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := serveDebug(ctx, "127.0.0.1:0", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get("http://" + addr.String() + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile:") {
		t.Fatalf("GET /debug/pprof/goroutine: %d %.200q; want 200 with a goroutine profile", res.StatusCode, body)
	}
	cancel()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			break
		}
		c.Close()
		if i == 1000 {
			t.Fatal("the profiler still accepts connections after its context ended")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestQuickstartAfterDemo follows the README in order: after `serve
// --demo`, the quickstart's release (the demo's schema without its
// comments and descriptions) is unchanged rather than a conflict, and its
// instance does not collide with the demo's.
func TestQuickstartAfterDemo(t *testing.T) {
	t.Parallel()
	d, stop := startDemo(t, t.TempDir())
	defer stop()
	m := tokenLineRE.FindStringSubmatch(d.lines[0])
	if m == nil {
		t.Fatalf("no admin token in %q", d.lines[0])
	}
	p := &coredProcess{addr: strings.TrimPrefix(d.url, "http://"), token: m[1]}
	admin := map[string]string{"authorization": p.token}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sdl := regexp.MustCompile(`-d '\{"schema": "(.*)"\}'`).FindSubmatch(readme)
	if sdl == nil {
		t.Fatal("the README's quickstart has no schema")
	}
	schema := strings.ReplaceAll(string(sdl[1]), `\"`, `"`)
	st, body := p.call(t, "PUT", "/admin/v1/apps/bookstore/releases/v1", admin, map[string]any{"schema": schema})
	if st != 200 || body["status"] != "unchanged" {
		t.Errorf("the quickstart's release after the demo: %d %v, want 200 unchanged", st, body)
	}
	if st, body := p.call(t, "POST", "/admin/v1/instances", admin, map[string]any{"domain": "books.local", "app": "bookstore", "release": "v1"}); st != 201 {
		t.Errorf("the quickstart's instance after the demo: %d %v", st, body)
	}
	changed := strings.Replace(schema, "age: Int", "age: String", 1)
	if st, body := p.call(t, "PUT", "/admin/v1/apps/bookstore/releases/v1", admin, map[string]any{"schema": changed}); st != 409 {
		t.Errorf("a changed schema under the running release's name: %d %v, want 409", st, body)
	}
}

// TestServeBindsBeforeShowingTheToken: a first start whose port is taken
// fails without showing (and so using up) the one-time admin token; the
// next start on a free port shows one.
func TestServeBindsBeforeShowingTheToken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	var out, errs lockedBuffer
	if code := run(t.Context(), []string{"serve", "--addr", taken.Addr().String(), "--data", dir}, env(nil), &out, &errs); code == 0 {
		t.Fatal("serve on a taken port exited 0")
	}
	if strings.Contains(out.String(), "admin token") {
		t.Errorf("a start that could not listen showed the admin token:\n%s", out.String())
	}
	d, stop := startDemo(t, dir)
	defer stop()
	if !strings.HasPrefix(d.lines[0], "admin token (generated on first start") {
		t.Errorf("the next start shows no admin token: %q", d.lines[0])
	}
}

// TestHealthcheck: `cored healthcheck` exits 0 against a serving server
// and 1 where nothing listens.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	d, stop := startDemo(t, t.TempDir())
	defer stop()
	addr := strings.TrimPrefix(d.url, "http://")
	var errs lockedBuffer
	if code := run(t.Context(), []string{"healthcheck", "--addr", addr}, env(nil), io.Discard, &errs); code != 0 {
		t.Errorf("healthcheck of a serving server: exit %d: %s", code, errs.String())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := ln.Addr().String()
	ln.Close()
	if code := run(t.Context(), []string{"healthcheck", "--addr", free}, env(nil), io.Discard, io.Discard); code != 1 {
		t.Errorf("healthcheck where nothing listens: exit %d, want 1", code)
	}
}

func TestLoopback(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"0.0.0.0:8080": "127.0.0.1:8080", ":8080": "127.0.0.1:8080", "[::]:9": "127.0.0.1:9", "10.0.0.2:80": "10.0.0.2:80"} {
		if got := loopback(in); got != want {
			t.Errorf("loopback(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRateLimit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]*tenant.RateLimit{
		"": nil, "100": {RequestsPerSecond: 100}, "0.5/10": {RequestsPerSecond: 0.5, Burst: 10}, " 20 / 40 ": {RequestsPerSecond: 20, Burst: 40},
	} {
		got, err := parseRateLimit(in)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("parseRateLimit(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"fast", "0", "-1", "10/x", "10/-1", "2000000"} {
		if _, err := parseRateLimit(bad); err == nil {
			t.Errorf("parseRateLimit(%q) accepted", bad)
		}
	}
}
