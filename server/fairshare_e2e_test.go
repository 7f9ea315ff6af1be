package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestFunctionFairShare drives the share through the real server: with 4
// calls at once in all, an instance runs 1 (a quarter). While its call
// loops, another instance's call runs and answers, and the instance's own
// next call waits for the slot (it is counted as waiting beside the
// looping one) instead of running.
func TestFunctionFairShare(t *testing.T) {
	t.Parallel()
	cfg := fn.DefaultConfig()
	cfg.MaxConcurrent, cfg.Timeout = 4, 10*time.Second
	env := servertest.Start(t, servertest.WithFunctionConfig(cfg))
	env.PutRelease("fs", "v1", `type Query {
  spin: String @fn(name: "spin", version: "v1")
  quick: String @fn(name: "quick", version: "v1")
}`)
	for name, src := range map[string]string{
		"spin":  `exports.main = (input, cb) => { for (;;) {} };`,
		"quick": `exports.main = (input, cb) => cb('done', null);`,
	} {
		if res, raw := env.DoRaw(http.MethodPut, "/admin/v1/apps/fs/functions/"+name+"/v1", env.AdminHeaders(), []byte(src)); res.StatusCode >= 300 {
			t.Fatalf("publishing %s: %d %s", name, res.StatusCode, raw)
		}
	}
	tokA := env.CreateInstance("a.test", "fs", "v1", tenant.Settings{})
	tokB := env.CreateInstance("b.test", "fs", "v1", tenant.Settings{})
	instA, _ := env.Directory.Lookup("a.test")

	answers := make(chan string, 2)
	ask := func(token, field string) {
		st, body := env.GraphQL("a.test", token, "{ "+field+" }", nil)
		answers <- field + ": " + http.StatusText(st) + " " + jsonText(body)
	}
	go ask(tokA, "spin")
	waitFor := func(what string, n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); env.Functions.Calls(instA.ID) < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: instance a has %d calls, want %d", what, env.Functions.Calls(instA.ID), n)
			}
		}
	}
	waitFor("a's spin", 1)
	// Another instance is not held up.
	if st, body := env.GraphQL("b.test", tokB, "{ quick }", nil); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
		t.Errorf("b's call while a runs its share: %d %s", st, jsonText(body))
	}
	if env.Functions.Calls(instA.ID) != 1 {
		t.Fatalf("a's calls after b's: %d, want its spin alone", env.Functions.Calls(instA.ID))
	}
	// a's next call waits beside the spin.
	go ask(tokA, "quick")
	waitFor("a's quick waiting", 2)
	for range 2 {
		// Its deadline comes soon after the spin's: it may get the slot
		// with too little time left and time out, which is waiting too.
		if a := <-answers; strings.HasPrefix(a, "quick") && !strings.Contains(a, "done") && !strings.Contains(a, "functionConcurrency") && !strings.Contains(a, "TIMEOUT") {
			t.Errorf("a's waiting call: %s, want its answer after the spin, the share named, or a time-out", a)
		}
	}
}
