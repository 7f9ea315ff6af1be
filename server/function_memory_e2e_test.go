package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/internal/procstatus"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestFunctionMemoryLimit drives a function that allocates without end
// through the real server, by GraphQL and REST: the call answers
// FUNCTION_RESOURCE_EXHAUSTED naming the instance's limit (its
// functionMemory setting, or the server's default), the next call of
// the same instance runs, and the server's own peak memory never held
// the function's heap (it ran in a worker process).
func TestFunctionMemoryLimit(t *testing.T) {
	t.Parallel()
	cfg := fn.DefaultConfig()
	cfg.Timeout = time.Minute // the bound, not the deadline, must stop the calls, even under the race detector
	env := servertest.Start(t, servertest.WithFunctionConfig(cfg))
	env.PutRelease("mem", "v1", `type Query {
  hoard: String @fn(name: "hoard", version: "v1")
  quick: String @fn(name: "quick", version: "v1")
}`)
	for name, src := range map[string]string{
		"hoard": `exports.main = () => { const keep = []; for (let i = 0; ; i++) keep.push('x'.repeat(4096) + i); };`,
		"quick": `exports.main = (input, cb) => cb('done', null);`,
	} {
		if res, raw := env.DoRaw(http.MethodPut, "/admin/v1/apps/mem/functions/"+name+"/v1", env.AdminHeaders(), []byte(src)); res.StatusCode >= 300 {
			t.Fatalf("publishing %s: %d %s", name, res.StatusCode, raw)
		}
	}
	// An instance's setting below the minimum is refused, naming it.
	if st, body := env.Admin(http.MethodPost, "/instances", map[string]any{"domain": "tiny.test", "app": "mem", "release": "v1",
		"functionMemory": 1024}); st != http.StatusBadRequest || !strings.Contains(jsonText(body), "functionMemory") {
		t.Errorf("functionMemory 1024: %d %s, want 400 naming functionMemory", st, jsonText(body))
	}
	small := env.CreateInstance("small.test", "mem", "v1", tenant.Settings{FunctionMemory: 16 << 20})
	plain := env.CreateInstance("plain.test", "mem", "v1", tenant.Settings{})

	for _, c := range []struct{ domain, token, limit string }{
		{"small.test", small, "16 MiB"},
		{"plain.test", plain, "64 MiB"},
	} {
		st, body := env.GraphQL(c.domain, c.token, "{ hoard }", nil)
		msg, code := servertest.FirstError(body)
		if code != "FUNCTION_RESOURCE_EXHAUSTED" || !strings.Contains(msg, c.limit) {
			_, logs := env.DoRaw(http.MethodGet, "/admin/v1/instances/"+c.domain+"/logs?limit=5", env.AdminHeaders(), nil)
			t.Logf("function log: %s", logs)
			t.Errorf("%s: GraphQL hoard answered %d %s, want FUNCTION_RESOURCE_EXHAUSTED naming %s", c.domain, st, jsonText(body), c.limit)
		}
		res, raw := env.DoRaw(http.MethodGet, "/rest/v1/fn/query/hoard",
			map[string]string{tenant.Header: c.domain, "authorization": c.token}, nil)
		if res.StatusCode != http.StatusBadGateway || !bytes.Contains(raw, []byte("FUNCTION_RESOURCE_EXHAUSTED")) || !bytes.Contains(raw, []byte(c.limit)) {
			_, logs := env.DoRaw(http.MethodGet, "/admin/v1/instances/"+c.domain+"/logs?limit=5", env.AdminHeaders(), nil)
			t.Errorf("%s: REST hoard answered %d %s, want 502 FUNCTION_RESOURCE_EXHAUSTED naming %s; function log: %s", c.domain, res.StatusCode, raw, c.limit, logs)
		}
		if st, body := env.GraphQL(c.domain, c.token, "{ quick }", nil); st != http.StatusOK || !strings.Contains(jsonText(body), "done") {
			t.Errorf("%s: the call after: %d %s", c.domain, st, jsonText(body))
		}
	}
	if hwm, err := procstatus.Self("VmHWM"); err != nil {
		t.Fatal(err)
	} else if hwm > 512<<20 {
		t.Errorf("the server's process peaked at %d MiB: a function's heap reached it", hwm>>20)
	}
}
