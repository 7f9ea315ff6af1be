package fn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDeadline: a function that never ends is stopped at its deadline,
// while other calls keep being served meanwhile.
func TestDeadline(t *testing.T) {
	t.Parallel()
	// Long enough for the quick calls to start a worker process of their
	// own on a loaded machine while the spinning one holds another.
	const timeout = time.Second
	e := newEnv(t, func(c *Config) { c.Timeout = timeout })
	e.publish("loop", "v1", `exports.main = function () { while (true) {} };`)
	e.publish("microtasks", "v1", `exports.main = async function () { for (;;) { await null; } };`)
	e.publish("recursion", "v1", `exports.main = function () { (function f() { f(); })(); };`)
	e.publish("quick", "v1", `exports.main = (input, cb) => cb(input.args.n * 2, null);`)

	for _, name := range []string{"loop", "microtasks"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			done := make(chan error, 1)
			go func() {
				_, err := e.invoke(Invocation{Name: name, Version: "v1", Caller: Caller{InstanceID: "i-" + name}})
				done <- err
			}()
			// While it spins, other calls are answered: progress, not
			// speed, is asserted (a loaded machine may slow any call).
			served := 0
			for loop := true; loop; {
				select {
				case err := <-done:
					var te *TimeoutError
					if !errors.As(err, &te) || te.Name != name {
						t.Fatalf("error = %v, want a time-out of %s", err, name)
					}
					loop = false
				default:
					res, err := e.invoke(Invocation{Name: "quick", Version: "v1", Args: map[string]any{"n": served}})
					switch {
					case errors.Is(err, ErrTimeout):
						// A loaded machine may starve one quick call past the
						// shared deadline; progress is what is asserted.
					case err != nil || res.Value != float64(2*served):
						t.Fatalf("a concurrent call answered %v, %v", res.Value, err)
					default:
						served++
					}
				}
			}
			// Load can only make the stop later, never earlier: the one
			// wall-clock assertion here is that the deadline was kept.
			if elapsed := time.Since(start); elapsed < timeout {
				t.Errorf("stopped after %s, before the %s deadline", elapsed, timeout)
			}
			if served == 0 {
				t.Error("no call was served while the function spun")
			}
			found := false
			for _, l := range e.logLines("i-" + name) {
				found = found || l.Level == "runtime" && strings.HasPrefix(l.Message, "stopped: function "+name+" version v1 timed out")
			}
			if !found {
				t.Errorf("the function log does not record the time-out: %+v", e.logLines("i-"+name))
			}
		})
	}
	t.Run("recursion", func(t *testing.T) {
		t.Parallel()
		_, err := e.invoke(Invocation{Name: "recursion", Version: "v1"})
		if d := cmp.Diff(&ExceptionError{Name: "recursion", Version: "v1", Message: "RangeError: Maximum call stack size exceeded"}, err); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
}

// TestNativeCodeDeadline: a backtracking regular expression runs in Go,
// where Interrupt does not reach; the caller still gets its time-out. The
// expression backtracks about 2^40 times (hours), so a runtime that
// waited for it would not answer at all: the answer itself is the proof,
// no clock is read.
func TestNativeCodeDeadline(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	e := newEnv(t, func(c *Config) { c.Timeout = timeout })
	e.publish("redos", "v1", `exports.main = (i, cb) => cb(/^(a+)+(?=b)c/.test('a'.repeat(40) + 'x'), null);`)
	_, err := e.invoke(Invocation{Name: "redos", Version: "v1"})
	errorIs(t, err, ErrTimeout)
}

// TestIsolation: nothing one call does to its globals is seen by the
// next call, of the same function or another, of any instance.
func TestIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.publish("pollute", "v1", `
		var counter = (globalThis.counter || 0) + 1;
		exports.main = function (input, cb) {
			cb({ counter: counter }, null); // the answer is read here; the rest pollutes after it
			Object.prototype.polluted = 'yes';
			Array.prototype.push = function () { return 'hijacked'; };
			JSON.stringify = function () { return '"hijacked"'; };
			globalThis.leak = 'leaked';
			leakedImplicit = 1;
			String.prototype.trim = null;
			Object.defineProperty(Object.prototype, 'frozen', { value: 1, writable: false, configurable: false });
		};`)
	e.publish("inspect", "v1", `exports.main = function (input, cb) {
		const a = []; a.push(1);
		cb({
			polluted: ({}).polluted === undefined ? 'no' : 'yes',
			frozen: ({}).frozen === undefined ? 'no' : 'yes',
			push: a.length,
			leak: typeof leak + '/' + typeof leakedImplicit,
			trim: typeof ''.trim,
			stringify: JSON.stringify({ ok: true }),
		}, null);
	};`)
	want := map[string]any{"polluted": "no", "frozen": "no", "push": float64(1), "leak": "undefined/undefined", "trim": "function", "stringify": `{"ok":true}`}
	for i, inst := range []string{"inst1", "inst1", "inst2"} {
		res, err := e.invoke(Invocation{Name: "pollute", Version: "v1", Caller: Caller{InstanceID: inst}})
		if err != nil {
			t.Fatalf("pollute: %v", err)
		}
		// Module state does not carry over either: each call loads the
		// module afresh.
		if d := cmp.Diff(map[string]any{"counter": float64(1)}, res.Value); d != "" {
			t.Errorf("call %d of pollute (-want +got):\n%s", i, d)
		}
		for _, caller := range []string{"inst1", "inst2"} {
			res, err := e.invoke(Invocation{Name: "inspect", Version: "v1", Caller: Caller{InstanceID: caller}})
			if err != nil {
				t.Fatalf("inspect: %v", err)
			}
			if d := cmp.Diff(want, res.Value); d != "" {
				t.Errorf("after call %d, %s sees (-want +got):\n%s", i, caller, d)
			}
		}
	}
}

// TestNoHostAccess: no file system, no process, no network by default.
func TestNoHostAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.publishFiles("probe", "v1", map[string]string{
		"index.js": `exports.main = function (input, cb) {
			try { const m = require(input.args.expr); cb('loaded: ' + typeof m, null); }
			catch (e) { cb({ failed: String(e.message || e) }, null); }
		};`,
		"lib/inside.js": `module.exports = 'inside';`,
	})
	e.publish("globals", "v1", `exports.main = (i, cb) => cb({
		process: typeof process, setTimeout: typeof setTimeout, fetch: typeof fetch,
		Buffer: typeof Buffer, require: typeof require, core: typeof core,
	}, null);`)
	e.publish("fetcher", "v1", `exports.main = async (input) => {
		try { await fetch(input.args.url); return 'fetched'; } catch (e) { return { failed: e.message }; }
	};`)

	res, err := e.invoke(Invocation{Name: "globals", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"process": "undefined", "setTimeout": "undefined", "fetch": "function",
		"Buffer": "function", "require": "function", "core": "object"}, res.Value); d != "" {
		t.Errorf("globals (-want +got):\n%s", d)
	}

	refused := map[string]string{
		"fs":                     "module fs is not available to functions (no file system, process or network access)",
		"node:fs":                "module fs is not available to functions (no file system, process or network access)",
		"fs/promises":            "module fs/promises is not available to functions (no file system, process or network access)",
		"child_process":          "module child_process is not available to functions (no file system, process or network access)",
		"process":                "module process is not available to functions (no file system, process or network access)",
		"/etc/passwd":            `cannot find module "/etc/passwd": a function may require files of its own package (./file), its node_modules, and crypto, buffer and util`,
		"/index.js":              `cannot find module "/index.js": a function may require files of its own package (./file), its node_modules, and crypto, buffer and util`,
		"../../../../etc/passwd": `cannot find module "../../../../etc/passwd": a function may require files of its own package (./file), its node_modules, and crypto, buffer and util`,
		"./lib/../../index.js":   `cannot find module "./lib/../../index.js": a function may require files of its own package (./file), its node_modules, and crypto, buffer and util`,
		"left-pad":               `cannot find module "left-pad": a function may require files of its own package (./file), its node_modules, and crypto, buffer and util`,
	}
	for expr, msg := range refused {
		res, err := e.invoke(Invocation{Name: "probe", Version: "v1", Args: map[string]any{"expr": expr}})
		if err != nil {
			t.Fatalf("require(%q): %v", expr, err)
		}
		if d := cmp.Diff(map[string]any{"failed": msg}, res.Value); d != "" {
			t.Errorf("require(%q) (-want +got):\n%s", expr, d)
		}
	}
	for _, expr := range []string{"./lib/inside", "./lib/../lib/inside.js", "crypto", "buffer", "util"} {
		res, err := e.invoke(Invocation{Name: "probe", Version: "v1", Args: map[string]any{"expr": expr}})
		if s, _ := res.Value.(string); err != nil || !strings.HasPrefix(s, "loaded: ") {
			t.Errorf("require(%q) = %v, %v; want it loaded", expr, res.Value, err)
		}
	}

	// A server on loopback that must never be reached.
	var hits sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.URL.Path, true)
		fmt.Fprint(w, "reached")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	allowAll := FetchPolicy{Enabled: true, AllowHosts: []string{"127.0.0.1", "localhost", "[::1]", "::1", "0.0.0.0", "*.localtest.me"}}
	cases := []struct {
		url    string
		policy FetchPolicy
		want   string
	}{
		{srv.URL + "/disabled", FetchPolicy{}, "fetch failed: fetch is not enabled for this instance"},
		{srv.URL + "/not-listed", FetchPolicy{Enabled: true, AllowHosts: []string{"api.example.com"}}, "fetch failed: host 127.0.0.1 is not on the instance's fetch allow-list"},
		{srv.URL + "/ip", allowAll, "fetch failed: refused: 127.0.0.1 resolves to an address that is not public"},
		{"http://localhost:" + port + "/name", allowAll, "fetch failed: refused: localhost resolves to an address that is not public"},
		{"http://0.0.0.0:" + port + "/any", allowAll, "fetch failed: refused: 0.0.0.0 resolves to an address that is not public"},
		{"file:///etc/passwd", allowAll, `fetch failed: "file:///etc/passwd" is not an http or https URL`},
	}
	for _, tc := range cases {
		res, err := e.invoke(Invocation{Name: "fetcher", Version: "v1", Args: map[string]any{"url": tc.url}, Fetch: tc.policy})
		if err != nil {
			t.Fatalf("fetch %s: %v", tc.url, err)
		}
		if d := cmp.Diff(map[string]any{"failed": tc.want}, res.Value); d != "" {
			t.Errorf("fetch %s (-want +got):\n%s", tc.url, d)
		}
	}
	hits.Range(func(k, _ any) bool {
		t.Errorf("the loopback server was reached at %v", k)
		return true
	})
}

// TestCoreGraphQL: core.graphql reaches the host's executor with the
// call's context, one level deeper.
func TestCoreGraphQL(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.MaxDepth = 2 })
	e.publish("store", "v1", `exports.main = async (input, cb) => {
		const res = await core.graphql('mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }', { v: { Event: { name: input.args.name } } });
		cb({ stored: res.data.upsert[0].id }, null);
	};`)
	e.publish("no-host", "v1", `exports.main = async () => { try { await core.graphql('{ x }'); } catch (e) { return e.message; } };`)
	var gotQuery string
	var gotVars map[string]any
	var depths []int
	inv := Invocation{Name: "store", Version: "v1", Args: map[string]any{"name": "paid"}}
	inv.GraphQL = func(ctx context.Context, query string, vars map[string]any) ([]byte, error) {
		gotQuery, gotVars = query, vars
		depths = append(depths, depthOf(ctx))
		if depthOf(ctx) < 3 {
			// The executor runs a field bound to a function again.
			if _, err := e.js.Invoke(ctx, Invocation{App: testApp, Name: "store", Version: "v1", Args: map[string]any{"name": "nested"}, GraphQL: inv.GraphQL}); err != nil {
				return nil, err
			}
		}
		return []byte(`{"data":{"upsert":[{"id":"01ABC"}]}}`), nil
	}
	_, err := e.invoke(inv)
	// The top call is depth 0, its nested call depth 1; depth 2 is refused.
	errorIs(t, err, ErrException)
	if !strings.Contains(err.Error(), "nested too deep") {
		t.Errorf("error = %v, want the nesting refused", err)
	}
	if d := cmp.Diff([]int{1, 2}, depths); d != "" {
		t.Errorf("depths seen by the host (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(gotQuery, "mutation(") {
		t.Errorf("query = %q", gotQuery)
	}
	if d := cmp.Diff(map[string]any{"v": map[string]any{"Event": map[string]any{"name": "nested"}}}, gotVars); d != "" {
		t.Errorf("variables (-want +got):\n%s", d)
	}

	inv.GraphQL = func(context.Context, string, map[string]any) ([]byte, error) {
		return []byte(`{"data":{"upsert":[{"id":"01ABC"}]}}`), nil
	}
	res, err := e.invoke(inv)
	if err != nil || cmp.Diff(map[string]any{"stored": "01ABC"}, res.Value) != "" {
		t.Errorf("with a host: %v, %v", res.Value, err)
	}
	res, err = e.invoke(Invocation{Name: "no-host", Version: "v1"})
	if err != nil || res.Value != "core.graphql is not available to this call" {
		t.Errorf("without a host: %v, %v", res.Value, err)
	}
}
