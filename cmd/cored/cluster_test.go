package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/store/mongo/mongotest"
)

// coredProcess is a `cored serve` process of the test binary.
type coredProcess struct {
	addr  string // host:port it listens on
	token string // the admin token it printed (startDemo's; see tokens)
	cmd   *exec.Cmd
	out   *lockedBuffer // its standard output, as read so far
	log   *lockedBuffer // its log (standard error) after the line "listening"
	eof   chan struct{} // closed when all of it is read
	once  sync.Once
}

// tokens returns the admin tokens the process printed so far.
func (p *coredProcess) tokens() []string {
	var out []string
	for _, line := range strings.Split(p.out.String(), "\n") {
		if m := tokenLineRE.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// stop kills the process and waits until its output is read to the end;
// calling it again does nothing.
func (p *coredProcess) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.eof
		_ = p.cmd.Wait()
	})
}

var tokenLineRE = regexp.MustCompile(`^admin token \(generated on first start.*\): (\S+)$`)

// startCored starts `cored serve` on a MongoDB URI with a key file
// (newKeyFile) and returns once it listens; it is killed when the test
// ends.
func startCored(t *testing.T, mongoURI, keyFile string) *coredProcess {
	t.Helper()
	return startServe(t, "--mongo-uri", mongoURI, "--key-file", keyFile)
}

// startServe starts `cored serve --addr 127.0.0.1:0` with args (and none
// of the CORE_ settings of the environment that args could name) and
// returns once it listens; it is killed when the test ends.
func startServe(t *testing.T, args ...string) *coredProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "CORED_TEST_MAIN=1", "CORE_ADMIN_TOKEN=", "CORE_MONGO_URI=", "CORE_KEY_FILE=")
	return startProcess(t, cmd)
}

// startProcess starts a `cored serve` command and returns once it
// listens; it is killed when the test ends.
func startProcess(t testing.TB, cmd *exec.Cmd) *coredProcess {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &coredProcess{cmd: cmd, out: &lockedBuffer{}, log: &lockedBuffer{}, eof: make(chan struct{})}
	t.Cleanup(p.stop)
	go func() {
		defer close(p.eof)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.out.Write(append(sc.Bytes(), '\n')) //nolint:errcheck // a buffer
		}
	}()
	var logs []string
	sc := bufio.NewScanner(stderr)
	for p.addr == "" && sc.Scan() {
		logs = append(logs, sc.Text())
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
			p.addr = line.Addr
		}
	}
	go func() {
		for sc.Scan() {
			p.log.Write(append(sc.Bytes(), '\n')) //nolint:errcheck // a buffer
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	if p.addr == "" {
		t.Fatalf("cored did not listen:\n%s", strings.Join(logs, "\n"))
	}
	return p
}

// call sends a JSON request to a process and decodes the answer.
func (p *coredProcess) call(t testing.TB, method, path string, headers map[string]string, body any) (int, map[string]any) {
	t.Helper()
	res := p.send(context.Background(), t, method, path, headers, body)
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// data runs a GraphQL document on the instance domain as token ("" for
// none), which must succeed, and returns its data.
func (p *coredProcess) data(t testing.TB, domain, token, query string, vars map[string]any) map[string]any {
	t.Helper()
	h := map[string]string{"core-domain": domain}
	if token != "" {
		h["authorization"] = token
	}
	st, body := p.call(t, "POST", "/graphql", h, map[string]any{"query": query, "variables": vars})
	if st != 200 || body["errors"] != nil {
		t.Fatalf("%s on %s: %d %v", query, domain, st, body)
	}
	d, _ := body["data"].(map[string]any)
	return d
}

// send sends a JSON body to the process with headers and returns the
// answer; the caller closes it.
func (p *coredProcess) send(ctx context.Context, t testing.TB, method, path string, headers map[string]string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, method, "http://"+p.addr+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTwoProcessesStartTogether: two cored processes started at the same
// moment on an empty MongoDB database agree on the admin token (one is
// generated, shown by one process only, and works on both), and, sharing
// one key file, accept each other's sessions. Three rounds, each on a
// fresh database: each round starts two processes on the MongoDB-wire
// server, and twenty of them took most of the package's ten-minute test
// time-out on a busy machine. The agreement itself is decided by the
// store (a create that fails when the document exists), which
// store/storetest checks under concurrency on both stores.
func TestTwoProcessesStartTogether(t *testing.T) {
	t.Parallel()
	const sdl = `type Book { title: String }`
	for round := range 3 {
		uri, db := mongotest.Database(t)
		u, err := url.Parse(uri)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + db
		var a, b *coredProcess
		var wg sync.WaitGroup
		wg.Add(2)
		keys := newKeyFile(t)
		go func() { defer wg.Done(); a = startCored(t, u.String(), keys) }()
		go func() { defer wg.Done(); b = startCored(t, u.String(), keys) }()
		wg.Wait()
		if a == nil || b == nil {
			t.FailNow()
		}
		// One of them shows the token: wait until its line is read.
		token := ""
		deadline := time.Now().Add(30 * time.Second) // generous: progress is what counts
		for token == "" {
			if ts := append(a.tokens(), b.tokens()...); len(ts) > 0 {
				token = ts[0]
			} else if time.Now().After(deadline) {
				t.Fatalf("round %d: neither process showed an admin token", round)
			} else {
				time.Sleep(10 * time.Millisecond)
			}
		}
		admin := map[string]string{"authorization": token}
		if st, body := a.call(t, "PUT", "/admin/v1/apps/shop/releases/v1", admin, map[string]any{"schema": sdl}); st != 201 && st != 200 {
			t.Fatalf("round %d: release through a: %d %v", round, st, body)
		}
		if st, body := b.call(t, "GET", "/admin/v1/apps", admin, nil); st != 200 {
			t.Fatalf("round %d: the shown admin token on the other process: %d %v", round, st, body)
		}
		st, body := a.call(t, "POST", "/admin/v1/instances", admin, map[string]any{"domain": "shop.test", "app": "shop", "release": "v1"})
		if st != 201 {
			t.Fatalf("round %d: instance through a: %d %v", round, st, body)
		}
		inst := map[string]string{"core-domain": "shop.test", "authorization": body["token"].(string)}
		gql := func(p *coredProcess, h map[string]string, q string, vars map[string]any) (int, map[string]any) {
			return p.call(t, "POST", "/graphql", h, map[string]any{"query": q, "variables": vars})
		}
		// b learns of the instance within its directory's sync interval.
		deadline = time.Now().Add(30 * time.Second)
		for {
			if st, _ := gql(b, inst, `{ __typename }`, nil); st == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: b never served the instance a created", round)
			}
			time.Sleep(50 * time.Millisecond)
		}
		gql(a, inst, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
			map[string]any{"v": map[string]any{"username": "ada", "password": map[string]any{"value": "correct horse battery"}}})
		_, body = gql(a, map[string]string{"core-domain": "shop.test"}, `{ login(username: "ada", password: "correct horse battery") { sessionToken } }`, nil)
		session, _ := body["data"].(map[string]any)["login"].(map[string]any)["sessionToken"].(string)
		if session == "" {
			t.Fatalf("round %d: login on a: %v", round, body)
		}
		if st, body := gql(b, map[string]string{"core-domain": "shop.test", "authorization": session}, `{ find(type: Book, arcql: "*") { edges { cursor } } }`, nil); st != 200 {
			t.Fatalf("round %d: a's session on b: %d %v", round, st, body)
		}
		// Only one of them showed a token, ever.
		a.stop()
		b.stop()
		if ts := append(a.tokens(), b.tokens()...); len(ts) != 1 {
			t.Fatalf("round %d: the processes showed %d admin tokens, want one", round, len(ts))
		}
	}
}

// TestSharedLoginThrottle: two processes on one MongoDB count failed
// logins together: ten failures from one address, five on each (each
// process's own count half the limit of an address for an account),
// refuse that address for the account on both, the right password too.
func TestSharedLoginThrottle(t *testing.T) {
	t.Parallel()
	a, b, inst := startPair(t)
	// The counts are kept in windows aligned to the clock (15 minutes for
	// an address and an account, a minute for an address): failures that
	// straddle a 15-minute window's end are made again, for another
	// account, once the address's minute has passed too.
	for try := 0; ; try++ {
		user := fmt.Sprintf("ada%d", try)
		login := func(p *coredProcess, pw string) (int, map[string]any) {
			return p.call(t, "POST", "/graphql", map[string]string{"core-domain": "shop.test"},
				map[string]any{"query": `query($u: String!, $p: String!) { login(username: $u, password: $p) { sessionToken errorCode } }`,
					"variables": map[string]any{"u": user, "p": pw}})
		}
		a.call(t, "POST", "/graphql", inst, map[string]any{"query": `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
			"variables": map[string]any{"v": map[string]any{"username": user, "password": map[string]any{"value": "correct horse battery"}}}})
		window := time.Now().Truncate(15 * time.Minute)
		for i := range 10 {
			p := []*coredProcess{a, b}[i%2]
			if st, body := login(p, "a wrong password"); st != 200 {
				t.Fatalf("failure %d: %d %v", i+1, st, body)
			}
		}
		if try == 0 && !time.Now().Truncate(15*time.Minute).Equal(window) {
			// Real processes on the real clock: the wait is for the
			// address's minute to end, at most a minute, in about one run
			// in a hundred.
			time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)))
			continue
		}
		for name, p := range map[string]*coredProcess{"a": a, "b": b} {
			if st, body := login(p, "correct horse battery"); st != 429 {
				t.Errorf("the right password on %s after 5 failures on each: %d %v, want 429", name, st, body)
			}
		}
		return
	}
}

// startPair starts two cored processes on one fresh database of the
// MongoDB-wire test server, deploys app shop (type Book) on instance
// shop.test through a, and waits until b serves it; inst holds the
// instance's headers (core-domain and its token).
func startPair(t *testing.T) (a, b *coredProcess, inst map[string]string) {
	t.Helper()
	mongoURI, keys := mongoURL(t), newKeyFile(t)
	a = startCored(t, mongoURI, keys)
	var token string
	deadline := time.Now().Add(30 * time.Second) // generous: progress is what counts
	for token == "" {
		if ts := a.tokens(); len(ts) > 0 {
			token = ts[0]
		} else if time.Now().After(deadline) {
			t.Fatal("no admin token shown")
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	b = startCored(t, mongoURI, keys)
	admin := map[string]string{"authorization": token}
	if st, body := a.call(t, "PUT", "/admin/v1/apps/shop/releases/v1", admin, map[string]any{"schema": `type Book { title: String }`}); st != 201 && st != 200 {
		t.Fatalf("release: %d %v", st, body)
	}
	st, body := a.call(t, "POST", "/admin/v1/instances", admin, map[string]any{"domain": "shop.test", "app": "shop", "release": "v1"})
	if st != 201 {
		t.Fatalf("instance: %d %v", st, body)
	}
	inst = map[string]string{"core-domain": "shop.test", "authorization": body["token"].(string)}
	deadline = time.Now().Add(30 * time.Second)
	for {
		if st, _ := b.call(t, "POST", "/graphql", inst, map[string]any{"query": `{ __typename }`}); st == 200 {
			return a, b, inst
		}
		if time.Now().After(deadline) {
			t.Fatal("b never served the instance")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// newKeyFile makes a key file for processes on one database to share
// (cored keys init) and returns its path.
func newKeyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "core.keys")
	var out, errs lockedBuffer
	if code := run(t.Context(), []string{"keys", "init", "--key-file", path}, env(nil), &out, &errs); code != 0 {
		t.Fatalf("cored keys init: exit %d: %s", code, errs.String())
	}
	return path
}
