package console_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/hooks"
	"github.com/corehq/core/internal/hooktest"
	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/schedule"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestReactionsInABrowser: in the console (console/e2e/reactions.mjs) an
// operator sees an instance's event hook with its delivery log, sends a
// test event that a real receiver gets signed per Standard Webhooks, and
// sees a scheduled function's last and next run.
func TestReactionsInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	chromium, node, _ := browserTools(t)
	_, script := nodetest.Script(t, "console reactions browser test", filepath.Join("e2e", "reactions.mjs"), "playwright-core")
	env := servertest.Start(t)
	env.PutRelease("react", "v1", `type Note { text: String }
type Mutation { tick: Boolean @fn(name: "tick", version: "v1") }`)
	if res, raw := env.DoRaw(http.MethodPut, "/admin/v1/apps/react/functions/tick/v1", env.AdminHeaders(),
		[]byte(`exports.main = (input, cb) => cb(true, null);`)); res.StatusCode >= 300 {
		t.Fatalf("publishing: %d %s", res.StatusCode, raw)
	}
	token := env.CreateInstance("react.test", "react", "v1", tenant.Settings{})
	rcv := hooktest.Start(t)
	upsert := func(v map[string]any) {
		t.Helper()
		st, body := env.GraphQL("react.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": v})
		if msg, _ := servertest.FirstError(body); st != http.StatusOK || msg != "" {
			t.Fatalf("upsert %v: %d %v", v, st, body)
		}
	}
	upsert(map[string]any{"EventHook": map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Note"}}})
	upsert(map[string]any{"Note": map[string]any{"text": "hello"}})
	rcv.WaitFor(t, "the note's event", func(r *hooktest.Receiver) bool { return len(r.Events()) >= 1 })

	// A schedule that has run once (its tick, on an injected clock).
	upsert(map[string]any{"ScheduledFunction": map[string]any{"fn": map[string]any{"type": "Mutation", "field": "tick"}, "interval": "MINUTE"}})
	svc := schedule.New(env.Store, env.Directory.Instances, env.Engine,
		schedule.Config{Now: func() time.Time { return time.Now().Add(time.Second) }}, zap.NewNop())
	if err := svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if runs, failed := svc.Stats(); runs != 1 || failed != 0 {
		t.Fatalf("the schedule ran %d times, %d failed", runs, failed)
	}

	runScript(t, node, script, 3*time.Minute,
		"CORE_URL="+env.URL,
		"CORE_ADMIN_TOKEN="+servertest.AdminToken,
		"HOOK_URL="+rcv.URL,
		"CHROMIUM="+chromium,
	)
	tests := 0
	for _, e := range rcv.Events() {
		if e.Type == hooks.TestType && e.Op == hooks.TestOp && e.Instance == "react.test" {
			tests++
		}
	}
	if _, _, bad := rcv.Posts(); tests != 1 || len(bad) > 0 {
		t.Errorf("the receiver got %d test events (want 1); bad signatures: %v", tests, bad)
	}
}
