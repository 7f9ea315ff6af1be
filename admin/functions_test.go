package admin_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// fnServer is a test server (which mounts the function routes, as cored
// does) with its function store and log at hand.
type fnServer struct {
	*servertest.Env
	pk   *fn.Packages
	logs *fn.Log
}

func startFunctions(t *testing.T) *fnServer {
	t.Helper()
	env := servertest.Start(t)
	return &fnServer{Env: env, pk: env.Packages, logs: env.Logs}
}

func zipFiles(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFunctionRoutes(t *testing.T) {
	t.Parallel()
	s := startFunctions(t)
	const src = "exports.main = (input, cb) => cb({ ok: true }, null);\n"
	pkg := zipFiles(t, map[string]string{
		"package.json": `{"main": "lib/main.js"}`,
		"lib/main.js":  `const h = require('./h'); exports.main = (i, cb) => cb(h(), null);`,
		"lib/h.js":     `module.exports = () => 'zipped';`,
	})
	evil := zipFiles(t, map[string]string{"index.js": src, "../../etc/cron.d/evil": "x"})
	var sha string
	run(t, s.Env, []step{
		{name: "no token", method: http.MethodPut, path: "/apps/shop/functions/verify/v1", noAuth: true, body: src, status: 401, code: "UNAUTHENTICATED"},
		{name: "publish a source", method: http.MethodPut, path: "/apps/shop/functions/verify/v1", body: src, status: 200, check: func(t *testing.T, b map[string]any) {
			if d := cmp.Diff(map[string]any{"app": "shop", "name": "verify", "version": "v1", "main": "index.js", "files": []any{"index.js"}, "format": "js", "status": "created"},
				fields(b, "app", "name", "version", "main", "files", "format", "status")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			sha, _ = b["sha256"].(string)
		}},
		{name: "again: unchanged", method: http.MethodPut, path: "/apps/shop/functions/verify/v1", body: src, status: 200, check: func(t *testing.T, b map[string]any) {
			if b["status"] != "unchanged" || b["sha256"] != sha {
				t.Errorf("answer %s", dump(b))
			}
		}},
		{name: "publish a zip package", method: http.MethodPut, path: "/apps/shop/functions/verify/v2", body: pkg, status: 200, check: func(t *testing.T, b map[string]any) {
			if d := cmp.Diff(map[string]any{"main": "lib/main.js", "files": []any{"lib/h.js", "lib/main.js", "package.json"}, "format": "zip", "status": "created"},
				fields(b, "main", "files", "format", "status")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		}},
		{name: "another function", method: http.MethodPut, path: "/apps/shop/functions/echo/1.0.0", body: src, status: 200},
		{name: "another app", method: http.MethodPut, path: "/apps/other/functions/verify/v1", body: src, status: 200},
		{name: "unsafe archive", method: http.MethodPut, path: "/apps/shop/functions/evil/v1", body: evil, status: 400, code: "BAD_REQUEST", message: `^function evil version v1: entry "\.\./\.\./etc/cron\.d/evil": "\.\." is not allowed in names$`},
		{name: "syntax error", method: http.MethodPut, path: "/apps/shop/functions/broken/v1", body: "exports.main = (", status: 400, code: "BAD_REQUEST", message: `^function broken version v1: index\.js does not compile`},
		{name: "bad version name", method: http.MethodPut, path: "/apps/shop/functions/verify/v1..x%2Fy", body: src, status: 400, code: "BAD_REQUEST", message: `^version "v1\.\.x%2Fy"`},
		{name: "empty body", method: http.MethodPut, path: "/apps/shop/functions/verify/v3", body: "", status: 400, code: "BAD_REQUEST", message: "the body is empty"},
		{name: "list", method: http.MethodGet, path: "/apps/shop/functions", status: 200, check: func(t *testing.T, b map[string]any) {
			type v struct{ Name, Version, Format string }
			var got []v
			for _, f := range b["functions"].([]any) {
				for _, ver := range f.(map[string]any)["versions"].([]any) {
					m := ver.(map[string]any)
					got = append(got, v{f.(map[string]any)["name"].(string), m["version"].(string), m["format"].(string)})
					if _, hasFiles := m["files"]; hasFiles {
						t.Errorf("a listing shows files: %s", dump(m))
					}
				}
			}
			if d := cmp.Diff([]v{{"echo", "1.0.0", "js"}, {"verify", "v1", "js"}, {"verify", "v2", "zip"}}, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		}},
		{name: "list of an app without functions", method: http.MethodGet, path: "/apps/none/functions", status: 200, check: func(t *testing.T, b map[string]any) {
			if d := cmp.Diff(map[string]any{"app": "none", "functions": []any{}}, b); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		}},
		{name: "one function's versions", method: http.MethodGet, path: "/apps/shop/functions/verify", status: 200, check: func(t *testing.T, b map[string]any) {
			vs := b["versions"].([]any)
			if len(vs) != 2 || vs[0].(map[string]any)["version"] != "v1" || vs[1].(map[string]any)["version"] != "v2" {
				t.Errorf("answer %s", dump(b))
			}
		}},
		{name: "unknown function", method: http.MethodGet, path: "/apps/shop/functions/nope", status: 404, code: "NOT_FOUND", message: "^app shop has no function nope$"},
		{name: "one version", method: http.MethodGet, path: "/apps/shop/functions/verify/v2", status: 200, check: func(t *testing.T, b map[string]any) {
			if b["main"] != "lib/main.js" || len(b["files"].([]any)) != 3 {
				t.Errorf("answer %s", dump(b))
			}
		}},
		{name: "delete", method: http.MethodDelete, path: "/apps/shop/functions/verify/v1", status: 200, check: func(t *testing.T, b map[string]any) {
			if b["version"] != "v1" || b["sha256"] != sha {
				t.Errorf("answer %s", dump(b))
			}
		}},
		{name: "deleted", method: http.MethodGet, path: "/apps/shop/functions/verify/v1", status: 404, code: "NOT_FOUND", message: "^function verify version v1 is not published$"},
		{name: "delete again", method: http.MethodDelete, path: "/apps/shop/functions/verify/v1", status: 404, code: "NOT_FOUND"},
		{name: "the other app keeps its version", method: http.MethodGet, path: "/apps/other/functions/verify/v1", status: 200},
		{name: "wrong method", method: http.MethodPost, path: "/apps/shop/functions/verify/v1", body: src, status: 405, code: "METHOD_NOT_ALLOWED"},
	})
}

func TestFunctionUploadLimit(t *testing.T) {
	t.Parallel()
	s := startFunctions(t)
	big := bytes.Repeat([]byte("/"), 2<<20) // over the server's 1 MiB body limit
	status, body := s.Admin(http.MethodPut, "/apps/shop/functions/big/v1", big)
	if msg, code := servertest.FirstError(body); status != 413 || code != "TOO_LARGE" {
		t.Errorf("answered %d %s %q", status, code, msg)
	}
}

func TestFunctionLogRoute(t *testing.T) {
	t.Parallel()
	s := startFunctions(t)
	s.PutRelease("shop", "v1", bookstoreSDL)
	s.CreateInstance("shop.test", "shop", "v1", tenant.Settings{})
	inst, err := s.Directory.Instance("shop.test")
	if err != nil {
		t.Fatal(err)
	}
	// A call of a published function through the runtime writes the log.
	status, _ := s.Admin(http.MethodPut, "/apps/shop/functions/talk/v1", `exports.main = (input, cb) => { console.log('hello', input.args.who); console.error('oops'); cb(null, null); };`)
	if status != 200 {
		t.Fatalf("publish answered %d", status)
	}
	js, err := fn.NewJS(fn.DefaultConfig(), s.pk, s.logs)
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	for _, who := range []string{"ann", "bob"} {
		if _, err := js.Invoke(context.Background(), fn.Invocation{App: "shop", Name: "talk", Version: "v1",
			Args: map[string]any{"who": who}, Caller: fn.Caller{InstanceID: inst.ID, Domain: inst.Domain}}); err != nil {
			t.Fatal(err)
		}
	}
	type line struct{ Level, Function, Message string }
	read := func(path string) []line {
		status, body := s.Admin(http.MethodGet, path, nil)
		if status != 200 || body["domain"] != "shop.test" || body["instanceId"] != inst.ID {
			t.Fatalf("GET %s answered %d %s", path, status, dump(body))
		}
		var out []line
		for _, e := range body["entries"].([]any) {
			m := e.(map[string]any)
			out = append(out, line{m["level"].(string), m["function"].(string), m["message"].(string)})
		}
		return out
	}
	if d := cmp.Diff([]line{{"log", "talk@v1", "hello ann"}, {"error", "talk@v1", "oops"}, {"log", "talk@v1", "hello bob"}, {"error", "talk@v1", "oops"}},
		read("/instances/shop.test/logs")); d != "" {
		t.Errorf("log (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]line{{"error", "talk@v1", "oops"}}, read("/instances/SHOP.test/logs?limit=1")); d != "" {
		t.Errorf("log, limit 1 (-want +got):\n%s", d)
	}
	run(t, s.Env, []step{
		{name: "bad limit", method: http.MethodGet, path: "/instances/shop.test/logs?limit=0", status: 400, code: "BAD_REQUEST"},
		{name: "unknown instance", method: http.MethodGet, path: "/instances/nope.test/logs", status: 404, code: "NOT_FOUND"},
		{name: "no token", method: http.MethodGet, path: "/instances/shop.test/logs", noAuth: true, status: 401, code: "UNAUTHENTICATED"},
	})
	if res, _ := s.DoRaw(http.MethodDelete, "/admin/v1/instances/shop.test/logs", s.AdminHeaders(), nil); res.StatusCode != 204 {
		t.Errorf("DELETE logs answered %d", res.StatusCode)
	}
	if got := read("/instances/shop.test/logs"); len(got) != 0 {
		t.Errorf("after DELETE: %v", got)
	}

	// Deleting the instance takes its function log with it.
	if _, err := js.Invoke(context.Background(), fn.Invocation{App: "shop", Name: "talk", Version: "v1",
		Args: map[string]any{"who": "cy"}, Caller: fn.Caller{InstanceID: inst.ID, Domain: inst.Domain}}); err != nil {
		t.Fatal(err)
	}
	if err := s.logs.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store.GetDoc(context.Background(), "function-log", inst.ID); err != nil {
		t.Fatalf("the function log after a call: %v", err)
	}
	if status, body := s.Admin(http.MethodDelete, "/instances/shop.test", nil); status != 200 {
		t.Fatalf("DELETE the instance answered %d %s", status, dump(body))
	}
	if _, err := s.Store.GetDoc(context.Background(), "function-log", inst.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the function log after the instance was deleted: %v, want ErrNotFound", err)
	}
}

// TestFetchSetting: an instance's fetch policy is set on creation and by
// PATCH, and checked.
func TestFetchSetting(t *testing.T) {
	t.Parallel()
	s := startFunctions(t)
	s.PutRelease("shop", "v1", bookstoreSDL)
	fetchOf := func(b map[string]any) any { return b["fetch"] }
	run(t, s.Env, []step{
		{name: "off by default", method: http.MethodPost, path: "/instances", body: map[string]any{"domain": "a.test", "app": "shop", "release": "v1"}, status: 201,
			check: func(t *testing.T, b map[string]any) {
				if d := cmp.Diff(map[string]any{"enabled": false, "allowHosts": []any{}}, fetchOf(b)); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			}},
		{name: "set on creation", method: http.MethodPost, path: "/instances",
			body: map[string]any{"domain": "b.test", "app": "shop", "release": "v1", "fetch": map[string]any{"enabled": true, "allowHosts": []string{"api.stripe.com", "*.example.com"}}}, status: 201,
			check: func(t *testing.T, b map[string]any) {
				if d := cmp.Diff(map[string]any{"enabled": true, "allowHosts": []any{"api.stripe.com", "*.example.com"}}, fetchOf(b)); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			}},
		{name: "bad host on creation", method: http.MethodPost, path: "/instances",
			body:   map[string]any{"domain": "c.test", "app": "shop", "release": "v1", "fetch": map[string]any{"enabled": true, "allowHosts": []string{"https://api.stripe.com/"}}},
			status: 400, code: "BAD_REQUEST", message: `fetch\.allowHosts: "https://api\.stripe\.com/" is not a host`},
		{name: "patch enables", method: http.MethodPatch, path: "/instances/a.test", body: map[string]any{"fetch": map[string]any{"enabled": true, "allowHosts": []string{"hooks.slack.com"}}}, status: 200,
			check: func(t *testing.T, b map[string]any) {
				if d := cmp.Diff(map[string]any{"enabled": true, "allowHosts": []any{"hooks.slack.com"}}, fetchOf(b)); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			}},
		{name: "patch keeps the hosts", method: http.MethodPatch, path: "/instances/a.test", body: map[string]any{"fetch": map[string]any{"enabled": false}}, status: 200,
			check: func(t *testing.T, b map[string]any) {
				if d := cmp.Diff(map[string]any{"enabled": false, "allowHosts": []any{"hooks.slack.com"}}, fetchOf(b)); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			}},
		{name: "bad host by patch", method: http.MethodPatch, path: "/instances/a.test", body: map[string]any{"fetch": map[string]any{"allowHosts": []string{"*.com"}}}, status: 400, code: "BAD_REQUEST"},
	})
}
