package oci_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/corehq/core/oci/docfs"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// hooksSDL binds a webhook field and a query field to function images.
const hooksSDL = `
type Query {
  whoami(name: String): Json @fn(name: "echo", version: "v1")
  python(name: String): Json @fn(name: "py", version: "v1")
}
type Mutation {
  greet(payload: WebhookPayload): WebhookResponse @fn(name: "echo", version: "v1")
}`

// hooks is an app with an instance whose webhook "greet" runs the
// function echo v1.
type hooks struct {
	*registry
	instanceToken string
}

func startHooks(t *testing.T, r *registry) *hooks {
	t.Helper()
	r.env.PutRelease("hooks", "v1", hooksSDL)
	h := &hooks{registry: r, instanceToken: r.env.CreateInstance("hooks.test", "hooks", "v1", tenant.Settings{AnonymousRequests: true})}
	status, body := r.env.GraphQL("hooks.test", h.instanceToken, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"Webhook": []any{map[string]any{"name": "greet", "query": map[string]any{"type": "Mutation", "field": "greet"}}}}})
	if status != http.StatusOK || body["errors"] != nil {
		t.Fatalf("saving the webhook: %d %s", status, dump(body))
	}
	return h
}

// hook posts body to the webhook greet and returns the status and the
// decoded answer.
func (h *hooks) hook(body string) (int, map[string]any) {
	h.t.Helper()
	res, out := h.env.DoRaw(http.MethodPost, "/webhook/hooks.test/greet", map[string]string{"content-type": "text/plain"}, body)
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	if m == nil {
		m = map[string]any{"raw": string(out)}
	}
	return res.StatusCode, m
}

// TestPushAndRun is the end-to-end test: a function image built
// as testdata/images/echo/Dockerfile says is pushed with go-containerregistry's
// client to a real cored, with a wrong password and then the right one;
// a webhook whose Mutation field is bound with @fn(name: "echo",
// version: "v1") then answers from the function inside the image.
func TestPushAndRun(t *testing.T) {
	t.Parallel()
	h := startHooks(t, start(t))
	img := dockerfileImage(t, "echo")

	// Before the push, the binding answers that nothing is published.
	if status, body := h.hook("ada"); status != http.StatusBadGateway {
		t.Fatalf("before the push: %d %s", status, dump(body))
	}

	// No password, a wrong one, a wrong user: 401 with the Basic challenge.
	res, out := h.raw(http.MethodGet, "/v2/", "", nil, nil)
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != `Basic realm="core"` ||
		res.Header.Get("Docker-Distribution-API-Version") != "registry/2.0" || ociError(out) != "UNAUTHORIZED" {
		t.Fatalf("GET /v2/ without credentials: %d %q %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), out)
	}
	err := h.push("hooks/echo:v1", img, "not-the-token")
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
		t.Fatalf("push with a wrong password: %v, want a 401", err)
	}
	for _, pw := range []string{"not-the-token", "01M807KMZKYZZVGHRX80HW8DXJ.forged"} {
		res, out = h.raw(http.MethodGet, "/v2/hooks/echo/tags/list", pw, nil, nil)
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != `Basic realm="core"` || !strings.Contains(string(out), "log in with user core") {
			t.Errorf("password %q: %d %s, want 401 saying how to log in", pw, res.StatusCode, out)
		}
	}

	// The right password: a publishing token of the app.
	tok := h.token("hooks")
	h.mustPush("hooks/echo:v1", img, tok)

	status, body := h.hook("ada")
	want := map[string]any{"from": "image", "greeting": "hello ada", "path": "/webhook/hooks.test/greet"}
	if status != http.StatusOK || !cmp.Equal(want, body) {
		t.Fatalf("the webhook after the push: %d %s, want 200 %s", status, dump(body), dump(want))
	}

	// The version is a published function, shown as such.
	st, info := h.env.Admin(http.MethodGet, "/apps/hooks/functions/echo/v1", nil)
	if st != http.StatusOK || info["main"] != "src/main.js" {
		t.Errorf("admin view of echo v1: %d %s", st, dump(info))
	}
	st, reg := h.env.Admin(http.MethodGet, "/apps/hooks/registry", nil)
	imgs, _ := reg["images"].([]any)
	if st != http.StatusOK || len(imgs) != 1 || imgs[0].(map[string]any)["runtime"] != "javascript" {
		t.Errorf("admin view of the app's images: %d %s", st, dump(reg))
	}
}

// TestPushNewImageForVersion: pushing another image as a version a release
// binds makes the next call run it, once the app allows tags to be
// overwritten; by default the push is refused with a clear error.
func TestPushNewImageForVersion(t *testing.T) {
	t.Parallel()
	h := startHooks(t, start(t))
	tok := h.token("hooks")
	h.mustPush("hooks/echo:v1", dockerfileImage(t, "echo"), tok)
	if status, body := h.hook("bob"); status != http.StatusOK || body["greeting"] != "hello bob" {
		t.Fatalf("first image: %d %s", status, dump(body))
	}
	v2 := image(t, layer(t,
		file{name: "function/index.js", data: `exports.main = (input, cb) => cb({status: 200, body: {greeting: 'howdy ' + JSON.parse(input.args.payload).body}}, null);`}))

	err := h.push("hooks/echo:v1", v2, tok)
	if err == nil || !strings.Contains(err.Error(), "TAG_INVALID") || !strings.Contains(err.Error(), "allowTagOverwrite") {
		t.Fatalf("overwriting a tag by default: %v, want TAG_INVALID saying how to allow it", err)
	}
	if status, body := h.hook("bob"); status != http.StatusOK || body["greeting"] != "hello bob" {
		t.Fatalf("after the refused push: %d %s", status, dump(body))
	}
	// Pushing the same image again is no overwrite.
	h.mustPush("hooks/echo:v1", dockerfileImage(t, "echo"), tok)

	if st, body := h.env.Admin(http.MethodPatch, "/apps/hooks/registry", map[string]any{"allowTagOverwrite": true}); st != http.StatusOK || body["allowTagOverwrite"] != true {
		t.Fatalf("allowing overwrites: %d %s", st, dump(body))
	}
	h.mustPush("hooks/echo:v1", v2, tok)
	if status, body := h.hook("bob"); status != http.StatusOK || body["greeting"] != "howdy bob" {
		t.Fatalf("the next call after the new push: %d %s, want the new image's answer", status, dump(body))
	}

	// Deleting the tag removes the function version it was pushed as.
	res, out := h.raw(http.MethodDelete, "/v2/hooks/echo/manifests/v1", tok, nil, nil)
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("deleting the tag: %d %s", res.StatusCode, out)
	}
	if st, body := h.env.Admin(http.MethodGet, "/apps/hooks/functions/echo/v1", nil); st != http.StatusNotFound {
		t.Errorf("the version after its tag was deleted: %d %s", st, dump(body))
	}
}

// TestTokens: a publishing token works for its own app only, and not
// once revoked; the admin token works for every app.
func TestTokens(t *testing.T) {
	t.Parallel()
	r := start(t)
	img := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb(1, null);`}))
	other := r.token("other")
	err := r.push("hooks/f:v1", img, other)
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != http.StatusForbidden {
		t.Fatalf("a token of another app: %v, want 403", err)
	}
	if res, out := r.raw(http.MethodGet, "/v2/hooks/f/tags/list", other, nil, nil); res.StatusCode != http.StatusForbidden ||
		ociError(out) != "DENIED" || !strings.Contains(string(out), "for app other") {
		t.Errorf("a token of another app: %d %s, want 403 DENIED naming its app", res.StatusCode, out)
	}
	r.mustPush("hooks/f:v1", img, servertest.AdminToken)
	tok := r.token("hooks")
	r.mustPush("hooks/f:v2", img, tok)

	// Pulls need credentials too.
	if res, _ := r.raw(http.MethodGet, "/v2/hooks/f/manifests/v1", "", nil, nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous pull: %d, want 401", res.StatusCode)
	}
	if res, out := r.raw(http.MethodGet, "/v2/_catalog", tok, nil, nil); res.StatusCode != http.StatusForbidden || ociError(out) != "DENIED" {
		t.Errorf("the catalog with an app's token: %d %s, want 403 DENIED", res.StatusCode, out)
	}
	if res, out := r.raw(http.MethodGet, "/v2/_catalog", servertest.AdminToken, nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(string(out), "hooks/f") {
		t.Errorf("the catalog with the admin token: %d %s", res.StatusCode, out)
	}

	// A blob mounts from a repository of the token's app, not from
	// another app's (the request becomes an ordinary upload).
	secret := []byte("a blob of app other")
	loc := startUpload(t, r, "other/f", other)
	if res, out := r.raw(http.MethodPut, withQuery(loc, "digest="+sha(secret)), other, map[string]string{"Content-Type": "application/octet-stream"}, secret); res.StatusCode != http.StatusCreated {
		t.Fatalf("uploading to other/f: %d %s", res.StatusCode, out)
	}
	if res, out := r.raw(http.MethodPost, "/v2/hooks/f/blobs/uploads/?mount="+sha(secret)+"&from=other/f", tok, nil, nil); res.StatusCode != http.StatusAccepted {
		t.Errorf("mounting another app's blob: %d %s, want 202 (an upload instead)", res.StatusCode, out)
	}
	if res, _ := r.raw(http.MethodGet, "/v2/hooks/f/blobs/"+sha(secret), tok, nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("another app's blob through the refused mount: %d, want 404", res.StatusCode)
	}
	layerDigest := mustDigest(t, mustLayers(t, img)[0]).String()
	if res, out := r.raw(http.MethodPost, "/v2/hooks/g/blobs/uploads/?mount="+layerDigest+"&from=hooks/f", tok, nil, nil); res.StatusCode != http.StatusCreated {
		t.Errorf("mounting a blob of the same app: %d %s, want 201", res.StatusCode, out)
	}

	status, list := r.env.Admin(http.MethodGet, "/apps/hooks/registry/tokens", nil)
	toks, _ := list["tokens"].([]any)
	if status != http.StatusOK || len(toks) != 1 || strings.Contains(dump(list), tok) {
		t.Fatalf("listing tokens: %d %s (one token, without its secret)", status, dump(list))
	}
	id := toks[0].(map[string]any)["id"].(string)
	if st, body := r.env.Admin(http.MethodDelete, "/apps/other/registry/tokens/"+id, nil); st != http.StatusNotFound {
		t.Errorf("revoking through another app: %d %s", st, dump(body))
	}
	if st, body := r.env.Admin(http.MethodDelete, "/apps/hooks/registry/tokens/"+id, nil); st != http.StatusOK {
		t.Fatalf("revoking: %d %s", st, dump(body))
	}
	err = r.push("hooks/f:v3", img, tok)
	if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
		t.Errorf("a revoked token: %v, want 401", err)
	}
	if st, _ := r.env.Do(http.MethodPost, "/admin/v1/apps/hooks/registry/tokens", nil, nil); st != http.StatusUnauthorized {
		t.Errorf("issuing a token without the admin token: %d", st)
	}
}

// TestTwoProcesses runs two servers on one store, as two cored processes
// behind a load balancer: an upload started through one continues
// through the other, and a function pushed through one answers through
// the other.
func TestTwoProcesses(t *testing.T) {
	t.Parallel()
	a := start(t)
	b := start(t, servertest.WithStore(a.env.Store))
	tok := a.token("hooks")

	data := blobData(docfs.ChunkSize + 10)
	half := len(data) / 2
	loc := startUpload(t, a, "hooks/echo", tok)
	res, out := b.raw(http.MethodPatch, loc, tok, map[string]string{
		"Content-Type": "application/octet-stream", "Content-Range": fmt.Sprintf("0-%d", half-1)}, data[:half])
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("a chunk through the other server: %d %s", res.StatusCode, out)
	}
	res, out = a.raw(http.MethodPut, withQuery(res.Header.Get("Location"), "digest="+sha(data)), tok,
		map[string]string{"Content-Type": "application/octet-stream"}, data[half:])
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("finishing the upload through the first server: %d %s", res.StatusCode, out)
	}
	if res, got := b.raw(http.MethodGet, "/v2/hooks/echo/blobs/"+sha(data), tok, nil, nil); res.StatusCode != http.StatusOK || !bytes.Equal(got, data) {
		t.Fatalf("reading the blob through the other server: %d, %d bytes", res.StatusCode, len(got))
	}

	ha := startHooks(t, a)
	a.mustPush("hooks/echo:v1", dockerfileImage(t, "echo"), tok)
	hb := &hooks{registry: b, instanceToken: ha.instanceToken}
	deadline := time.Now().Add(30 * time.Second) // generous: a loaded machine may be slow; progress is what counts
	for {
		status, body := hb.hook("eve")
		if status == http.StatusOK && body["greeting"] == "hello eve" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the function pushed through one server, called through the other: %d %s", status, dump(body))
		}
		time.Sleep(50 * time.Millisecond) // the other server follows the instance within its sync interval
	}
}
