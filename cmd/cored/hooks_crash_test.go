package main

import (
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/internal/hooktest"
)

// TestEventHooksSurviveKill: a real cored process posts the changes of
// an instance to a (slow) receiver and is killed (SIGKILL) while it does;
// after a restart on the same data every change written before the kill
// reaches the receiver, signed, on the embedded store and on MongoDB
// (where the restarted process takes over the dead one's lease once it
// has run out).
func TestEventHooksSurviveKill(t *testing.T) {
	t.Parallel()
	for name, store := range crashStores(t, t.TempDir()) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--admin-token", crashAdmin, "--hook-allow-private"}, store...)
			p := startCoredArgs(t, args...)
			h := map[string]string{"core-domain": "crash.test", "authorization": newNotesInstance(t, p, nil)}
			rcv := hooktest.Start(t)
			rcv.Delay.Store(int64(20 * time.Millisecond))
			upsert := func(v map[string]any) string {
				t.Helper()
				code, out := p.call(t, "POST", "/graphql", h, map[string]any{"query": `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
					"variables": map[string]any{"v": v}})
				up, _ := out["data"].(map[string]any)["upsert"].([]any)
				if code != 200 || out["errors"] != nil || len(up) != 1 {
					t.Fatalf("upsert: %d %v", code, out)
				}
				return up[0].(map[string]any)["id"].(string)
			}
			upsert(map[string]any{"EventHook": map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Note"}}})
			var mu sync.Mutex
			written := map[string]bool{}
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 50 {
						id := upsert(map[string]any{"Note": map[string]any{"text": "n"}})
						mu.Lock()
						written[id] = true
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			rcv.WaitFor(t, "some deliveries", func(r *hooktest.Receiver) bool { return len(r.Events()) >= 20 })
			_ = p.cmd.Process.Kill() // SIGKILL, mid-delivery
			p.stop()
			before := len(rcv.Events())
			if before >= len(written) {
				t.Logf("every change was delivered before the kill (%d): the machine was faster than the receiver's delay", before)
			}

			startCoredArgs(t, args...)
			rcv.WaitFor(t, "every note after the restart", func(r *hooktest.Receiver) bool {
				got := map[string]bool{}
				for _, e := range r.Events() {
					if e.Op == "CREATED" {
						got[e.Record] = true
					}
				}
				for id := range written {
					if !got[id] {
						return false
					}
				}
				return true
			})
			acc, _, bad := rcv.Posts()
			if len(bad) > 0 {
				t.Errorf("posts with bad signatures: %v", bad)
			}
			t.Logf("%d changes; %d delivered before the kill; %d posts in all (repeats after the restart: at least once)", len(written), before, acc)
		})
	}
}
