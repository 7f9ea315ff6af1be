package fn

import (
	"context"
	"strings"
	"testing"
)

// TestHostPanicIsRecovered: a panic in the host's GraphQL (the goroutine
// that runs a function's core.graphql request, in this process or for a
// worker process) is recovered: the function's request fails with a
// generic error naming nothing of the panic, the panic and its stack go
// to the instance's function log, and the runtime keeps serving.
//
// hostile checklist 45: a panic inside a function runner goroutine →
// recovered and logged; the process keeps serving.
func TestHostPanicIsRecovered(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(*Config){"in process": inline, "worker processes": nil} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, change)
			e.publish("ask", "v1", `exports.main = async () => {
				try { await core.graphql('{ __typename }'); return 'answered'; } catch (err) { return 'failed: ' + err.message; }
			};`)
			panicking := func(ctx context.Context, q string, vars map[string]any) ([]byte, error) {
				panic("kaboom: secret internals")
			}
			answering := func(ctx context.Context, q string, vars map[string]any) ([]byte, error) {
				return []byte(`{"data":{"__typename":"Query"}}`), nil
			}
			res, err := e.invoke(Invocation{Name: "ask", Version: "v1", GraphQL: panicking})
			if err != nil || res.Value != "failed: core.graphql: internal error in the service" {
				t.Errorf("a panicking host: %v %v, want the generic failure", res.Value, err)
			}
			if err := e.logs.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			var logged string
			for _, l := range e.logLines("inst1") {
				logged += l.Message + "\n"
			}
			if !strings.Contains(logged, "core.graphql: internal error: kaboom: secret internals") || !strings.Contains(logged, "goroutine") {
				t.Errorf("the function log holds no panic with its stack:\n%s", logged)
			}
			// The runtime keeps serving.
			res, err = e.invoke(Invocation{Name: "ask", Version: "v1", GraphQL: answering})
			if err != nil || res.Value != "answered" {
				t.Errorf("the next call: %v %v, want answered", res.Value, err)
			}
		})
	}
}
