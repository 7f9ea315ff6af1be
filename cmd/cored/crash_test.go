package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/corehq/core/store/mongo/mongotest"
)

// startCoredArgs starts `cored serve` with args (and an ephemeral
// address) and returns once it listens; it is killed when the test ends.
func startCoredArgs(t *testing.T, args ...string) *coredProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "CORED_TEST_MAIN=1", "CORE_ADMIN_TOKEN=", "CORE_MONGO_URI=")
	return startProcess(t, cmd)
}

// TestAcknowledgedWritesSurviveKill: writers upsert records through a
// real cored process, concurrently, and the process is killed (SIGKILL)
// while they write; after a restart on the same data, every write that
// was acknowledged (200, no errors) is there with its value, on the
// embedded store and on MongoDB.
//
// hostile checklist 55: kill -9 during concurrent writes → every
// acknowledged write is present after a restart.
func TestAcknowledgedWritesSurviveKill(t *testing.T) {
	t.Parallel()
	for name, store := range crashStores(t, t.TempDir()) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--admin-token", crashAdmin}, store...)
			p := startCoredArgs(t, args...)
			token := newNotesInstance(t, p, nil)
			h := map[string]string{"core-domain": "crash.test", "authorization": token}

			// Eight writers; the process is killed once 200 writes are
			// acknowledged, while the writers go on.
			var mu sync.Mutex
			acked := map[string]string{} // id → text
			untilKilled(p, 8, 200, func(w, i int) (answered, ack bool) {
				text := fmt.Sprintf("writer %d note %d", w, i)
				code, out, ok := tryCall(p, h, map[string]any{"query": `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
					"variables": map[string]any{"v": map[string]any{"Note": map[string]any{"text": text}}}})
				if !ok {
					return false, false // the process is gone
				}
				up, _ := out["data"].(map[string]any)["upsert"].([]any)
				if code != 200 || out["errors"] != nil || len(up) != 1 {
					return true, false
				}
				id, _ := up[0].(map[string]any)["id"].(string)
				mu.Lock()
				acked[id] = text
				mu.Unlock()
				return true, true
			})

			q := startCoredArgs(t, args...)
			found := map[string]string{}
			var after any
			for {
				code, out, ok := tryCall(q, h, map[string]any{"query": `query($a: String) { find(type: Note, arcql: "*", first: 1000, after: $a) { edges { cursor node { ... on Note { text } } } pageInfo { hasNextPage endCursor } } }`,
					"variables": map[string]any{"a": after}})
				if !ok || code != 200 || out["errors"] != nil {
					t.Fatalf("reading after the restart: %d %v", code, out)
				}
				find := out["data"].(map[string]any)["find"].(map[string]any)
				for _, e := range find["edges"].([]any) {
					edge := e.(map[string]any)
					found[edge["cursor"].(string)] = edge["node"].(map[string]any)["text"].(string)
				}
				if find["pageInfo"].(map[string]any)["hasNextPage"] != true {
					break
				}
				after = find["pageInfo"].(map[string]any)["endCursor"]
			}
			mu.Lock()
			defer mu.Unlock()
			missing := 0
			for id, text := range acked {
				if found[id] != text {
					missing++
				}
			}
			if missing > 0 {
				t.Errorf("%d of %d acknowledged writes are missing or changed after the kill and restart", missing, len(acked))
			}
			t.Logf("%d writes acknowledged before the kill, %d records after the restart", len(acked), len(found))
		})
	}
}

// untilKilled runs n workers against p, each calling work(w, i) for i =
// 0, 1, … until p is gone (work answers false) or killed; work reports
// whether its write was acknowledged. p is killed (SIGKILL) once killAt
// writes are acknowledged, while the others are under way; untilKilled
// returns when every worker has stopped, with p stopped.
func untilKilled(p *coredProcess, n, killAt int, work func(w, i int) (answered, ack bool)) {
	var count atomic.Int64
	killed := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				answered, ack := work(w, i)
				if !answered {
					return
				}
				if ack && count.Add(1) >= int64(killAt) {
					once.Do(func() {
						_ = p.cmd.Process.Kill() // SIGKILL
						close(killed)
					})
				}
			}
		}()
	}
	wg.Wait()
	<-killed
	p.stop()
}

// mongoURL returns the URL of a new database of the MongoDB-wire test
// server.
func mongoURL(t *testing.T) string {
	t.Helper()
	uri, db := mongotest.Database(t)
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}

// crashStores are the store arguments of cored for the kill tests: a
// data directory (data) and a new database of the MongoDB test server.
func crashStores(t *testing.T, data string) map[string][]string {
	t.Helper()
	return map[string][]string{
		"bolt":  {"--data", data},
		"mongo": {"--mongo-uri", mongoURL(t), "--key-file", newKeyFile(t)},
	}
}

// crashAdmin is the admin token of the cored processes of these tests.
const crashAdmin = "crash-test-admin-token-0123456789"

// newNotesInstance publishes a release of Note records on p and creates
// the instance crash.test on it (settings: more of its fields); it
// returns the instance token.
func newNotesInstance(t *testing.T, p *coredProcess, settings map[string]any) string {
	t.Helper()
	adminH := map[string]string{"authorization": crashAdmin}
	if st, body := p.call(t, "PUT", "/admin/v1/apps/notes/releases/v1", adminH, map[string]any{"schema": `type Note { text: String }`}); st != 200 && st != 201 {
		t.Fatalf("release: %d %v", st, body)
	}
	req := map[string]any{"domain": "crash.test", "app": "notes", "release": "v1"}
	for k, v := range settings {
		req[k] = v
	}
	st, body := p.call(t, "POST", "/admin/v1/instances", adminH, req)
	token, _ := body["token"].(string)
	if st != 201 || token == "" {
		t.Fatalf("instance: %d %v", st, body)
	}
	return token
}

// tryCall posts a GraphQL request to /graphql; ok is false when the
// process did not answer (it was killed).
func tryCall(p *coredProcess, headers map[string]string, body any) (int, map[string]any, bool) {
	b, _ := json.Marshal(body)
	req, err := newRequest(context.Background(), "http://"+p.addr+"/graphql", b)
	if err != nil {
		return 0, nil, false
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := crashClient.Do(req)
	if err != nil {
		return 0, nil, false
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return res.StatusCode, nil, false // cut off mid-answer: not acknowledged
	}
	return res.StatusCode, out, true
}

var crashClient = &http.Client{}

func newRequest(ctx context.Context, u string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", u, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("content-type", "application/json")
	}
	return req, err
}
