package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/internal/procstatus"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
)

// TestAggregationMemoryBounded runs high-cardinality aggregations (a
// group per record, the distinct values of another field) over 200,000
// records in a real cored process on the embedded store, built as it
// ships (not under the race detector, whose shadow memory would be
// measured too), with cored's own garbage collection target:
//
//   - an account that reads another's records through a grant answers
//     TOO_COMPLEX, and the process's resident memory grew by less than
//     200 MB meanwhile (its peak, VmHWM, reset before);
//   - three at once (the grantee twice and the instance token) each
//     answer TOO_COMPLEX, the growth still bounded;
//   - after them, a collection leaves the heap near where it was before:
//     nothing holds their groups.
//
// The records are written into the store file directly, in transactions
// of 20,000, while the process is stopped: through the API they would
// take minutes under the race detector.
//
// Hostile checklist 48: aggregations over 200k records, high-cardinality
// groupBy and distinct, by a grantee and by the instance token, alone and
// three at once → bounded (TOO_COMPLEX) before memory grows.
func TestAggregationMemoryBounded(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		t.Fatalf("the test reads and resets /proc figures of the server (Linux): %v", err)
	}
	bin := buildCored(t)
	dir := t.TempDir()
	const adminToken = "an-admin-token-of-the-aggregation-memory-test"
	start := func() (*coredProcess, string) {
		t.Helper()
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--admin-token", adminToken,
			"--debug-addr", "127.0.0.1:0", "--log-level", "info")
		cmd.Env = withoutEnv(os.Environ(), "GOGC", "GOMEMLIMIT", "CORE_")
		p := startProcess(t, cmd)
		return p, p.waitLog(t, "profiler listening")
	}

	// The app, the instance, two accounts, and ada's grant of her books
	// to bob, through the API.
	p, _ := start()
	admin := map[string]string{"authorization": adminToken}
	if st, body := p.call(t, "PUT", "/admin/v1/apps/lib/releases/v1", admin, map[string]any{"schema": `type Book { title: String author: String }`}); st != 201 && st != 200 {
		t.Fatalf("release: %d %v", st, body)
	}
	st, body := p.call(t, "POST", "/admin/v1/instances", admin, map[string]any{"domain": "lib.test", "app": "lib", "release": "v1"})
	if st != 201 {
		t.Fatalf("instance: %d %v", st, body)
	}
	instID, _ := body["instanceId"].(string)
	instToken, _ := body["token"].(string)
	gql := func(auth, q string, vars map[string]any) (int, map[string]any) {
		t.Helper()
		h := map[string]string{"core-domain": "lib.test"}
		if auth != "" {
			h["authorization"] = auth
		}
		return p.call(t, "POST", "/graphql", h, map[string]any{"query": q, "variables": vars})
	}
	ids := map[string]string{}
	sessions := map[string]string{}
	for _, name := range []string{"ada", "bob"} {
		_, body := gql(instToken, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
			map[string]any{"v": map[string]any{"username": name, "password": map[string]any{"value": "correct horse battery"}}})
		ids[name] = textAt(body, "data", "createAccount", "id")
		_, body = gql("", `{ login(username: "`+name+`", password: "correct horse battery") { sessionToken } }`, nil)
		sessions[name] = textAt(body, "data", "login", "sessionToken")
		if ids[name] == "" || sessions[name] == "" {
			t.Fatalf("account %s: %v", name, body)
		}
	}
	if st, body := gql(sessions["ada"], `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{
		"AccessRight": map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find",
			"permissionType": "RBP", "members": []any{map[string]any{"core": map[string]any{"id": ids["bob"]}}}}}}); st != 200 || body["errors"] != nil {
		t.Fatalf("ada's grant: %d %v", st, body)
	}
	p.stop()

	const records = 200_000
	seedBooks(t, filepath.Join(dir, "core.db"), instID, ids["ada"], records)

	p, debugAddr := start()
	const (
		count = `{ aggregate { book { core { count } } } }`
		wide  = `{ aggregate { bookWith(groupBy: [{field: title}], first: 10000) { core { count } title { count(distinct: true) } author { count(distinct: true) } } } }`
	)
	// Bob reads ada's books through the grant: he counts them all.
	if _, body := gql(sessions["bob"], count, nil); textAt(body, "data", "aggregate", "book", "core", "count") != strconv.Itoa(records) {
		t.Fatalf("bob's count of ada's books: %v", body)
	}
	pid := p.cmd.Process.Pid
	heapBefore := heapInuse(t, debugAddr)

	run := func(who string) (int, string, string, time.Duration) {
		begin := time.Now()
		st, body := gql(map[string]string{"bob": sessions["bob"], "instance": instToken}[who], wide, nil)
		msg, code := servertest.FirstError(body)
		return st, code, msg, time.Since(begin)
	}
	figure := func(key string) int64 {
		t.Helper()
		kb, err := procstatus.KB(fmt.Sprintf("/proc/%d/status", pid), key)
		if err != nil {
			t.Fatal(err)
		}
		return kb << 10
	}
	// resetPeak sets the peak resident set size (VmHWM) to the current
	// one (5 to clear_refs) and returns that; grown is how far the peak
	// rose past it since. The store file's pages the scans read count
	// too (bolt maps it): the count above read them all already.
	resetPeak := func() int64 {
		t.Helper()
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			t.Fatal(err)
		}
		return figure("VmRSS")
	}

	base := resetPeak()
	anon := figure("RssAnon")
	st, code, msg, took := run("bob")
	grew := figure("VmHWM") - base
	t.Logf("bob alone: %d %s %q in %v; RSS %d MiB before, grew %d MiB at the peak (anonymous memory %d → %d MiB)",
		st, code, msg, took.Round(time.Millisecond), base>>20, grew>>20, anon>>20, figure("RssAnon")>>20)
	if st != http.StatusOK || code != "TOO_COMPLEX" || !strings.Contains(msg, "32 MiB") {
		t.Errorf("bob's aggregation: %d %s %q, want TOO_COMPLEX naming the bound of 32 MiB", st, code, msg)
	}
	if grew >= 200<<20 {
		t.Errorf("the server's resident memory grew by %d MiB for one aggregation, want under 200", grew>>20)
	}

	base = resetPeak()
	var wg sync.WaitGroup
	results := make([]string, 3)
	for i, who := range []string{"bob", "bob", "instance"} {
		wg.Go(func() {
			st, code, msg, took := run(who)
			results[i] = fmt.Sprintf("%s: %d %s %q in %v", who, st, code, msg, took.Round(time.Millisecond))
			if st != http.StatusOK || code != "TOO_COMPLEX" {
				t.Errorf("three at once, %s: %d %s %q, want TOO_COMPLEX", who, st, code, msg)
			}
		})
	}
	wg.Wait()
	grew = figure("VmHWM") - base
	t.Logf("three at once: %s; RSS %d MiB before, grew %d MiB at the peak", strings.Join(results, "; "), base>>20, grew>>20)
	if grew >= 400<<20 {
		t.Errorf("the server's resident memory grew by %d MiB for three aggregations, want under 400", grew>>20)
	}

	// Released: a collection finds the heap near where it was.
	heapAfter := heapInuse(t, debugAddr)
	t.Logf("heap in use after a collection: %d MiB before the aggregations, %d MiB after", heapBefore>>20, heapAfter>>20)
	if heapAfter > heapBefore+16<<20 {
		t.Errorf("after the aggregations ended the heap holds %d MiB, %d MiB before them", heapAfter>>20, heapBefore>>20)
	}
}

// buildCored builds cored as it ships (without the test binary's race
// detector) into a temporary directory.
func buildCored(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cored")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = withoutEnv(os.Environ(), "GOFLAGS")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building cored: %v\n%s", err, out)
	}
	return bin
}

// seedBooks writes n books owned by owner into the store file at path,
// each with its own title and author, 20,000 to a transaction.
func seedBooks(t testing.TB, path, inst, owner string, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := bolt.Open(path, bolt.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	const batch = 20_000
	for i := 0; i < n; i += batch {
		ops := make([]store.Op, 0, batch)
		for j := i; j < i+batch && j < n; j++ {
			ops = append(ops, store.Op{Kind: store.OpUpsert, Type: "Book", ID: store.NewID(), Now: now, CreatedBy: owner,
				Set: map[string]any{"title": fmt.Sprintf("a title of its own, number %06d", j), "author": fmt.Sprintf("author %06d", j)}})
		}
		if _, err := st.Write(ctx, inst, ops, store.Quota{}); err != nil {
			t.Fatalf("writing books %d to %d: %v", i, i+len(ops), err)
		}
	}
}

// heapInuse is the server's heap in use after a collection, from its
// profiler (the heap profile with gc=1 collects first).
func heapInuse(t *testing.T, debugAddr string) int64 {
	t.Helper()
	_, b := servertest.Get(t, nil, "http://"+debugAddr+"/debug/pprof/heap?debug=1&gc=1")
	m := heapInuseRE.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no HeapInuse in the heap profile: %.200s", b)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

var heapInuseRE = regexp.MustCompile(`# HeapInuse = (\d+)`)

// waitLog waits until the process logs a line with message msg and
// returns its addr.
func (p *coredProcess) waitLog(t *testing.T, msg string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // generous: progress is what counts
	for {
		for _, line := range strings.Split(p.log.String(), "\n") {
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == msg {
				return l.Addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cored never logged %q", msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// withoutEnv drops the variables named, or starting with a name ending
// in "_", from env.
func withoutEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		for _, n := range names {
			if k == n || (strings.HasSuffix(n, "_") && strings.HasPrefix(k, n)) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// textAt is the value at a path of a decoded JSON body as text ("" when
// missing); numbers as whole numbers.
func textAt(v any, path ...string) string {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}
