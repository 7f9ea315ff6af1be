package oci_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/server/servertest"
)

// query runs a query field of the hooks app and returns its value or its
// error's code and message.
func (h *hooks) query(field, name string) (value any, code, message string) {
	h.t.Helper()
	status, body := h.env.GraphQL("hooks.test", h.instanceToken, `query($n: String) { v: `+field+`(name: $n) }`, map[string]any{"n": name})
	if status != http.StatusOK {
		h.t.Fatalf("%s: %d %s", field, status, dump(body))
	}
	if errs, _ := body["errors"].([]any); len(errs) > 0 {
		e := errs[0].(map[string]any)
		ext, _ := e["extensions"].(map[string]any)
		code, _ = ext["code"].(string)
		message, _ = e["message"].(string)
		return nil, code, message
	}
	return body["data"].(map[string]any)["v"], "", ""
}

// TestPushRefusesBrokenFunctions: a JavaScript image is checked as an
// upload through the admin API would be, and refused with the reason.
func TestPushRefusesBrokenFunctions(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("hooks")
	cases := []struct {
		name  string
		files []file
		want  string
	}{
		{"does not compile", []file{{name: "function/index.js", data: "exports.main = (input, cb) => {"}}, "index.js does not compile"},
		{"main is missing", []file{{name: "function/package.json", data: `{"main": "nowhere.js"}`}}, `package.json main "nowhere.js" is not in the package`},
		{"a link", []file{{name: "function/index.js", typ: '2', link: "/etc/passwd"}}, "/function/index.js is a link"},
	}
	for _, tc := range cases {
		err := r.push("hooks/broken:v1", image(t, layer(t, tc.files...)), pw)
		if err == nil || !strings.Contains(err.Error(), "MANIFEST_INVALID") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want MANIFEST_INVALID saying %q", tc.name, err, tc.want)
		}
	}
	if res, _ := r.raw(http.MethodGet, "/v2/hooks/broken/manifests/v1", pw, nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("a refused push left its tag: %d", res.StatusCode)
	}
}

// TestPushIndexAndDockerManifests: a multi-platform index runs its
// linux/amd64 image's function; a Docker (schema 2) image runs as an OCI
// one does.
func TestPushIndexAndDockerManifests(t *testing.T) {
	t.Parallel()
	h := startHooks(t, start(t))
	pw := h.token("hooks")
	arch := func(a string) v1.Image {
		return image(t, layer(t, file{name: "function/index.js", data: `exports.main = (input, cb) => cb({arch: '` + a + `'}, null);`}))
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: arch("arm64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: arch("amd64"), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
	)
	if err := remote.WriteIndex(h.ref("hooks/echo:v1"), idx, login(pw)); err != nil {
		t.Fatalf("pushing an index: %v", err)
	}
	if v, code, msg := h.query("whoami", "x"); !cmp.Equal(v, map[string]any{"arch": "amd64"}) {
		t.Errorf("the index's function: %v %s %s, want linux/amd64's", v, code, msg)
	}

	docker, err := mutate.AppendLayers(empty.Image, layer(t, file{name: "function/index.js", data: `exports.main = (input, cb) => cb({kind: 'docker'}, null);`}))
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := docker.MediaType(); mt != types.DockerManifestSchema2 {
		t.Fatalf("test image is %s", mt)
	}
	h.mustPush("hooks/echo:v2", docker, pw)
	st, info := h.env.Admin(http.MethodGet, "/apps/hooks/functions/echo/v2", nil)
	if st != http.StatusOK || info["main"] != "index.js" {
		t.Errorf("the Docker image's function: %d %s", st, dump(info))
	}
}

// containerImage is a function image that is not JavaScript.
func containerImage(t *testing.T) v1.Image {
	return image(t, layer(t, file{name: "function/handler.py", data: "def handle(req):\n    return req\n"}))
}

// TestContainerImageWithoutEngine: a version pushed as a non-JavaScript
// image, with no container engine configured, answers a clear error; it
// replaces a JavaScript package the version had.
func TestContainerImageWithoutEngine(t *testing.T) {
	t.Parallel()
	h := startHooks(t, start(t))
	pw := h.token("hooks")
	// The version first had a JavaScript package (published through the
	// admin API).
	if res, body := h.env.DoRaw(http.MethodPut, "/admin/v1/apps/hooks/functions/py/v1", h.env.AdminHeaders(),
		`exports.main = (input, cb) => cb('javascript', null);`); res.StatusCode != http.StatusOK {
		t.Fatalf("publishing: %d %s", res.StatusCode, body)
	}
	if v, _, _ := h.query("python", "x"); v != "javascript" {
		t.Fatalf("before the push: %v", v)
	}
	h.mustPush("hooks/py:v1", containerImage(t), pw)
	v, code, msg := h.query("python", "x")
	if v != nil || code != "NO_CONTAINER_ENGINE" || !strings.Contains(msg, "is a container image") || !strings.Contains(msg, "--function-gateway") {
		t.Errorf("calling a container image without an engine: %v %q %q", v, code, msg)
	}
	st, reg := h.env.Admin(http.MethodGet, "/apps/hooks/registry", nil)
	if imgs, _ := reg["images"].([]any); st != http.StatusOK || len(imgs) != 1 || imgs[0].(map[string]any)["runtime"] != oci.RuntimeContainer {
		t.Errorf("the app's images: %d %s", st, dump(reg))
	}
}

// gateway is an OpenFaaS-style function gateway for the tests: it
// answers /function/hooks-py-v1 and records what it was sent.
type gateway struct {
	*httptest.Server
	mu       sync.Mutex
	paths    []string
	headers  []http.Header
	received []map[string]any
}

func startGateway(t *testing.T) *gateway {
	g := &gateway{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var in map[string]any
		_ = json.Unmarshal(b, &in)
		g.mu.Lock()
		g.paths, g.headers, g.received = append(g.paths, r.URL.Path), append(g.headers, r.Header.Clone()), append(g.received, in)
		g.mu.Unlock()
		args, _ := in["args"].(map[string]any)
		switch args["name"] {
		case "refuse":
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"code": "NOPE", "message": "the python function says no"}`)
		case "crash":
			http.Error(w, "Traceback (most recent call last): secret internals", http.StatusInternalServerError)
		default:
			_, _ = io.WriteString(w, `{"python": true, "hello": "`+args["name"].(string)+`"}`)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

// TestGatewayRuns: with an HTTP function gateway configured, a container
// image's calls go there, with the input a JavaScript function gets.
func TestGatewayRuns(t *testing.T) {
	t.Parallel()
	gw := startGateway(t)
	cfg := fn.DefaultGatewayConfig()
	cfg.URL = gw.URL + "/function/{app}-{name}-{version}"
	// The gateway's notes go to the instance's function log, set below.
	var engine *fn.Gateway
	r := start(t, servertest.WithImages(oci.DefaultConfig(), lazy(func() *fn.Gateway { return engine })))
	eng, err := fn.NewGateway(cfg, r.env.Logs)
	if err != nil {
		t.Fatal(err)
	}
	engine = eng
	h := startHooks(t, r)
	h.mustPush("hooks/py:v1", containerImage(t), h.token("hooks"))

	v, code, msg := h.query("python", "ada")
	if !cmp.Equal(v, map[string]any{"python": true, "hello": "ada"}) {
		t.Fatalf("the gateway's answer: %v %s %s", v, code, msg)
	}
	gw.mu.Lock()
	path, hdr, in := gw.paths[0], gw.headers[0], gw.received[0]
	gw.mu.Unlock()
	core, _ := in["core"].(map[string]any)
	if path != "/function/hooks-py-v1" || hdr.Get("X-Core-Function") != "py" || hdr.Get("X-Core-Version") != "v1" ||
		!cmp.Equal(in["args"], map[string]any{"name": "ada"}) || core["domain"] != "hooks.test" {
		t.Errorf("the gateway got %s %v %s", path, hdr, dump(in))
	}
	if _, code, msg := h.query("python", "refuse"); code != "NOPE" || msg != "the python function says no" {
		t.Errorf("the function's own error: %q %q", code, msg)
	}
	if _, code, msg := h.query("python", "crash"); code != "BAD_GATEWAY" || strings.Contains(msg, "secret") {
		t.Errorf("a crash at the gateway: %q %q, want BAD_GATEWAY without its details", code, msg)
	}
	// The details are in the instance's function log.
	st, logs := h.env.Admin(http.MethodGet, "/instances/hooks.test/logs", nil)
	if st != http.StatusOK || !strings.Contains(dump(logs), "the function gateway answered 500 Internal Server Error: Traceback") {
		t.Errorf("the function log after the crash: %d %s", st, dump(logs))
	}
}

// lazy is a runtime whose engine is made after the server starts (the
// gateway writes to the server's function log).
type lazy func() *fn.Gateway

func (l lazy) Invoke(ctx context.Context, inv fn.Invocation) (fn.Result, error) {
	g := l()
	if g == nil {
		return fn.Result{}, errors.New("no engine yet")
	}
	return g.Invoke(ctx, inv)
}

// TestRequestBound: an upload request over Config.MaxRequestBytes is
// refused before it is read.
func TestRequestBound(t *testing.T) {
	t.Parallel()
	cfg := oci.DefaultConfig()
	cfg.MaxRequestBytes = 1000
	r := start(t, servertest.WithImages(cfg, nil))
	pw := r.token("big")
	loc := startUpload(t, r, "big/f", pw)
	res, out := r.raw(http.MethodPatch, loc, pw, map[string]string{"Content-Type": "application/octet-stream"}, make([]byte, 2000))
	if res.StatusCode != http.StatusBadRequest || ociError(out) != "SIZE_INVALID" {
		t.Errorf("a 2,000-byte chunk over a 1,000-byte bound: %d %s", res.StatusCode, out)
	}
	// The server's own body limit (1 MiB by default) does not apply to
	// /v2/: a layer larger than it uploads.
	r = start(t)
	pw = r.token("big")
	big := blobData(3 << 20)
	loc = startUpload(t, r, "big/f", pw)
	if res, out := r.raw(http.MethodPut, withQuery(loc, "digest="+sha(big)), pw, map[string]string{"Content-Type": "application/octet-stream"}, big); res.StatusCode != http.StatusCreated {
		t.Errorf("a 3 MiB layer: %d %s", res.StatusCode, out)
	}
}
