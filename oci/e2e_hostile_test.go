package oci_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/corehq/core/oci/docfs"
)

const manifestType = "application/vnd.oci.image.manifest.v1+json"

// hostileRegistry is a registry holding one function version, hooks/f:v1,
// pushed with the app's token, and a blob of another app, other/g.
type hostileRegistry struct {
	*registry
	hooks, other string // publishing tokens
	img          v1.Image
	otherBlob    []byte
}

func startHostile(t *testing.T) *hostileRegistry {
	t.Helper()
	r := start(t)
	h := &hostileRegistry{registry: r, hooks: r.token("hooks"), other: r.token("other"),
		img:       image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb('v1', null);`})),
		otherBlob: []byte("a blob of app other")}
	r.mustPush("hooks/f:v1", h.img, h.hooks)
	loc := startUpload(t, r, "other/g", h.other)
	if res, out := r.raw(http.MethodPut, withQuery(loc, "digest="+sha(h.otherBlob)), h.other, octets, h.otherBlob); res.StatusCode != http.StatusCreated {
		t.Fatalf("uploading other's blob: %d %s", res.StatusCode, out)
	}
	return h
}

var octets = map[string]string{"Content-Type": "application/octet-stream"}

// unchanged checks that hooks/f still holds v1 alone, as pushed, that v1
// is still its function, and that the registry holds no repository but
// hooks/f and other/g.
func (h *hostileRegistry) unchanged(t *testing.T) {
	t.Helper()
	res, out := h.raw(http.MethodGet, "/v2/hooks/f/tags/list", h.hooks, nil, nil)
	var tags struct{ Tags []string }
	if res.StatusCode != http.StatusOK || json.Unmarshal(out, &tags) != nil || !slices.Equal(tags.Tags, []string{"v1"}) {
		t.Errorf("hooks/f's tags: %d %s, want v1 alone", res.StatusCode, out)
	}
	want, err := h.img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := h.raw(http.MethodHead, "/v2/hooks/f/manifests/v1", h.hooks, map[string]string{"Accept": manifestType}, nil); res.Header.Get("Docker-Content-Digest") != want.String() {
		t.Errorf("hooks/f:v1 is %q, want the image pushed (%s)", res.Header.Get("Docker-Content-Digest"), want)
	}
	if st, body := h.env.Admin(http.MethodGet, "/apps/hooks/functions", nil); st != http.StatusOK || strings.Count(dump(body), `"version"`) != 1 {
		t.Errorf("hooks' functions: %d %s, want f v1 alone", st, dump(body))
	}
	// The repositories as stored (the catalog lists only those holding
	// an image), read through a driver of the registry's storage.
	d := docfs.New(h.env.Store)
	var repos []string
	apps, err := d.List(context.Background(), "/docker/registry/v2/repositories")
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range apps {
		names, err := d.List(context.Background(), app)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			repos = append(repos, path.Base(app)+"/"+path.Base(n))
		}
	}
	slices.Sort(repos)
	if !slices.Equal(repos, []string{"hooks/f", "other/g"}) {
		t.Errorf("the stored repositories: %q, want hooks/f and other/g", repos)
	}
}

// TestPushWithoutTheRightToken: each write of a push (start an upload,
// send a chunk, finish it, upload a blob whole, mount one, put a
// manifest by tag, over a tag and by digest, delete a tag) without a
// token, with a wrong password, and with another app's token, on an
// upload the right token started: 401 UNAUTHORIZED with the Basic
// challenge, or 403 DENIED naming the token's app. Nothing changes, and
// the upload the right token started goes on and finishes.
//
// hostile checklist 52: a push without a token or with another app's
// token → refused cleanly.
func TestPushWithoutTheRightToken(t *testing.T) {
	t.Parallel()
	h := startHostile(t)
	loc := startUpload(t, h.registry, "hooks/f", h.hooks)
	data := []byte("a blob only hooks' token may write")
	other := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb('not yours', null);`}))
	manifest, err := other.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	layerDigest := mustDigest(t, mustLayers(t, h.img)[0]).String()
	chunk := map[string]string{"Content-Type": "application/octet-stream", "Content-Range": fmt.Sprintf("0-%d", len(data)-1)}
	mt := map[string]string{"Content-Type": manifestType}
	steps := []struct {
		name, method, path string
		headers            map[string]string
		body               []byte
	}{
		{"start an upload", http.MethodPost, "/v2/hooks/f/blobs/uploads/", nil, nil},
		{"send a chunk", http.MethodPatch, loc, chunk, data},
		{"finish the upload", http.MethodPut, withQuery(loc, "digest="+sha(data)), octets, data},
		{"upload a blob whole", http.MethodPost, "/v2/hooks/f/blobs/uploads/?digest=" + sha(data), octets, data},
		{"mount a blob", http.MethodPost, "/v2/hooks/g/blobs/uploads/?mount=" + layerDigest + "&from=hooks/f", nil, nil},
		{"push a tag", http.MethodPut, "/v2/hooks/f/manifests/v2", mt, manifest},
		{"push over a tag", http.MethodPut, "/v2/hooks/f/manifests/v1", mt, manifest},
		{"push by digest", http.MethodPut, "/v2/hooks/f/manifests/" + sha(manifest), mt, manifest},
		{"delete a tag", http.MethodDelete, "/v2/hooks/f/manifests/v1", nil, nil},
	}
	for _, who := range []struct {
		name, pw string
		status   int
		code     string
	}{
		{"no token", "", http.StatusUnauthorized, "UNAUTHORIZED"},
		{"a wrong password", "not-a-token", http.StatusUnauthorized, "UNAUTHORIZED"},
		{"a forged token", "01M807KMZKYZZVGHRX80HW8DXJ.forged", http.StatusUnauthorized, "UNAUTHORIZED"},
		{"another app's token", h.other, http.StatusForbidden, "DENIED"},
	} {
		for _, s := range steps {
			res, out := h.raw(s.method, s.path, who.pw, s.headers, s.body)
			if res.StatusCode != who.status || ociError(out) != who.code {
				t.Errorf("%s with %s: %d %s, want %d %s", s.name, who.name, res.StatusCode, out, who.status, who.code)
			}
			switch {
			case who.status == http.StatusUnauthorized && res.Header.Get("WWW-Authenticate") != `Basic realm="core"`:
				t.Errorf("%s with %s: no Basic challenge (%q)", s.name, who.name, res.Header.Get("WWW-Authenticate"))
			case who.status == http.StatusForbidden && !strings.Contains(string(out), "for app other"):
				t.Errorf("%s with %s: %s, want the refusal to name the token's app", s.name, who.name, out)
			}
		}
	}
	h.unchanged(t)
	if res, _ := h.raw(http.MethodGet, "/v2/hooks/f/blobs/"+sha(data), h.hooks, nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("the blob the refused requests carried: %d, want 404", res.StatusCode)
	}
	// The upload the right token started received nothing of theirs: it
	// goes on from 0 and finishes.
	res, out := h.raw(http.MethodPatch, loc, h.hooks, chunk, data)
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("the right token's chunk: %d %s", res.StatusCode, out)
	}
	if res, out := h.raw(http.MethodPut, withQuery(res.Header.Get("Location"), "digest="+sha(data)), h.hooks, nil, nil); res.StatusCode != http.StatusCreated {
		t.Fatalf("finishing the right token's upload: %d %s", res.StatusCode, out)
	}
	if res, out := h.raw(http.MethodGet, "/v2/hooks/f/blobs/"+sha(data), h.hooks, nil, nil); res.StatusCode != http.StatusOK || !bytes.Equal(out, data) {
		t.Errorf("the right token's blob: %d %q", res.StatusCode, out)
	}
}

// TestHostileNames: names, tags, digests, upload ids and mount sources
// that climb out of their place (.., encoded or not) or name the
// storage's own directories are refused with a 4xx (NAME_INVALID or
// TAG_INVALID where the registry can say which part is wrong; a 404
// where the path is none of the API's), never served from elsewhere:
// another app's blob is not reached, no repository is made, no upload
// of another repository is touched.
//
// hostile checklist 52: path traversal in names → refused cleanly.
func TestHostileNames(t *testing.T) {
	t.Parallel()
	h := startHostile(t)
	manifest, err := h.img.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	blob := sha(h.otherBlob)
	for _, tc := range []struct {
		method, path string
		code         string // "": a 404 of a path that is none of the API's
	}{
		{http.MethodGet, "/v2/hooks/../other/g/blobs/" + blob, "NAME_INVALID"},
		{http.MethodGet, "/v2/hooks/f%2f..%2f..%2fother%2fg/blobs/" + blob, "NAME_INVALID"},
		{http.MethodGet, "/v2/hooks/..%2fother%2fg/blobs/" + blob, "NAME_INVALID"},
		{http.MethodGet, "/v2/%2e%2e/g/blobs/" + blob, "NAME_INVALID"},
		{http.MethodPut, "/v2/../f/manifests/v2", "NAME_INVALID"},
		{http.MethodPut, "/v2/%2e%2e/f/manifests/v2", "NAME_INVALID"},
		{http.MethodPut, "/v2/hooks/f%2f..%2f..%2fother/manifests/v2", "NAME_INVALID"},
		{http.MethodPost, "/v2/hooks/f/../../other/g/blobs/uploads/", "NAME_INVALID"},
		{http.MethodGet, "/v2/hooks/_uploads/tags/list", "NAME_INVALID"},
		{http.MethodGet, "/v2/hooks/f/_manifests/tags/list", "NAME_INVALID"},
		{http.MethodGet, "/v2/hooks/.f/tags/list", "NAME_INVALID"},
		{http.MethodPut, "/v2/hooks/f/manifests/..%2f..%2f..%2fother%2fg%2fmanifests%2fv1", "TAG_INVALID"},
		{http.MethodPut, "/v2/hooks/f/manifests/.hidden", "TAG_INVALID"},
		{http.MethodGet, "/v2/hooks/f/manifests/..%2f..%2fv1", ""},
		{http.MethodGet, "/v2/hooks/f/blobs/sha256:..%2f..%2f..%2fother%2fg", ""},
		{http.MethodGet, "/v2/hooks/f/blobs/..%2f..%2f_uploads", ""},
		{http.MethodPatch, "/v2/hooks/f/blobs/uploads/..%2f..%2f..%2fother%2fg%2f_uploads%2fx", ""},
		{http.MethodPatch, "/v2/hooks/f/blobs/uploads/../../../other/g/_uploads/x", ""},
		{http.MethodGet, "/v2/../../etc/passwd", ""},
	} {
		var body []byte
		headers := map[string]string{}
		if tc.method == http.MethodPut {
			body, headers["Content-Type"] = manifest, manifestType
		}
		res, out := h.raw(tc.method, tc.path, h.hooks, headers, body)
		switch {
		case tc.code != "" && (res.StatusCode != http.StatusBadRequest || ociError(out) != tc.code):
			t.Errorf("%s %s: %d %s, want 400 %s", tc.method, tc.path, res.StatusCode, out, tc.code)
		case tc.code == "" && res.StatusCode != http.StatusNotFound:
			t.Errorf("%s %s: %d %s, want 404", tc.method, tc.path, res.StatusCode, out)
		}
	}
	// A mount whose source climbs into another app is an ordinary upload
	// (202), not a mount of other's blob (201); the blob stays out of
	// hooks' reach.
	for _, from := range []string{"hooks/../other/g", "other/g", "hooks/f/../../other/g", "../other/g"} {
		res, out := h.raw(http.MethodPost, "/v2/hooks/f/blobs/uploads/?mount="+blob+"&from="+from, h.hooks, nil, nil)
		if res.StatusCode != http.StatusAccepted {
			t.Errorf("mounting other's blob from %s: %d %s, want 202 (an upload instead)", from, res.StatusCode, out)
		}
	}
	if res, _ := h.raw(http.MethodGet, "/v2/hooks/f/blobs/"+blob, h.hooks, nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("other's blob through hooks/f: %d, want 404", res.StatusCode)
	}
	h.unchanged(t)
	if res, out := h.raw(http.MethodGet, "/v2/other/g/blobs/"+blob, h.other, nil, nil); res.StatusCode != http.StatusOK || !bytes.Equal(out, h.otherBlob) {
		t.Errorf("other's blob through its own repository: %d %q", res.StatusCode, out)
	}
}

// TestManifestsNamingMissingBlobs: a manifest whose config or layer was
// never pushed, and an image index naming a manifest that was never
// pushed, put by tag and by digest: 400 MANIFEST_BLOB_UNKNOWN; no tag,
// no manifest and no function version is left of them.
//
// hostile checklist 52: a manifest naming missing blobs → refused
// cleanly.
func TestManifestsNamingMissingBlobs(t *testing.T) {
	t.Parallel()
	h := startHostile(t)
	// An image whose layer is pushed and whose config is not.
	noConfig := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb('no config', null);`}))
	if err := remote.WriteLayer(h.ref("hooks/f:v1").Context(), mustLayers(t, noConfig)[0], login(h.hooks)); err != nil {
		t.Fatal(err)
	}
	noConfigRaw, err := noConfig.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	// An image whose config is pushed and whose layer is not: the
	// pushed image's manifest with its layer's digest changed.
	var m map[string]any
	raw, err := h.img.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["layers"].([]any)[0].(map[string]any)["digest"] = sha([]byte("a layer nobody pushed"))
	noLayer, _ := json.Marshal(m)
	// An index naming the pushed image and one never pushed.
	pushed, _ := h.img.Digest()
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []any{
			map[string]any{"mediaType": manifestType, "digest": pushed.String(), "size": len(raw), "platform": map[string]any{"os": "linux", "architecture": "amd64"}},
			map[string]any{"mediaType": manifestType, "digest": sha([]byte("a manifest nobody pushed")), "size": 512, "platform": map[string]any{"os": "linux", "architecture": "arm64"}},
		}})

	for _, tc := range []struct {
		name, mediaType string
		body            []byte
	}{
		{"a missing config", manifestType, noConfigRaw},
		{"a missing layer", manifestType, noLayer},
		{"an index naming a missing manifest", "application/vnd.oci.image.index.v1+json", index},
	} {
		for _, ref := range []string{"v2", sha(tc.body)} {
			res, out := h.raw(http.MethodPut, "/v2/hooks/f/manifests/"+ref, h.hooks, map[string]string{"Content-Type": tc.mediaType}, tc.body)
			if res.StatusCode != http.StatusBadRequest || ociError(out) != "MANIFEST_BLOB_UNKNOWN" {
				t.Errorf("%s, put as %s: %d %s, want 400 MANIFEST_BLOB_UNKNOWN", tc.name, ref, res.StatusCode, out)
			}
			if res, _ := h.raw(http.MethodHead, "/v2/hooks/f/manifests/"+sha(tc.body), h.hooks, nil, nil); res.StatusCode != http.StatusNotFound {
				t.Errorf("%s, after its put as %s: the manifest answers %d, want 404", tc.name, ref, res.StatusCode)
			}
		}
	}
	if st, body := h.env.Admin(http.MethodGet, "/apps/hooks/functions/f/v2", nil); st != http.StatusNotFound {
		t.Errorf("function f v2 after the refused pushes: %d %s, want 404", st, dump(body))
	}
	h.unchanged(t)
}

// TestHugeDeclaredSizes: requests that declare more than the registry
// takes are refused before it is read, on a connection that sends a few
// bytes of the declared terabyte: a manifest → 413 TOO_LARGE naming the
// 4 MiB bound, a chunk or a whole blob → 400 SIZE_INVALID naming
// Config.MaxRequestBytes. A manifest sent without a length is read to
// its bound and refused naming it; a manifest whose descriptors declare
// sizes no blob has, or more than an image may unpack to, is refused.
// Nothing is stored, and the next push succeeds.
//
// hostile checklist 52: huge declared sizes → refused cleanly.
func TestHugeDeclaredSizes(t *testing.T) {
	t.Parallel()
	h := startHostile(t)
	loc := startUpload(t, h.registry, "hooks/f", h.hooks)
	const terabyte = 1 << 40
	for _, tc := range []struct {
		name, method, path, contentType string
		status                          int
		code, names                     string
	}{
		{"a manifest by tag", http.MethodPut, "/v2/hooks/f/manifests/v2", manifestType, http.StatusRequestEntityTooLarge, "TOO_LARGE", "4194304"},
		{"a manifest by digest", http.MethodPut, "/v2/hooks/f/manifests/" + sha([]byte("x")), manifestType, http.StatusRequestEntityTooLarge, "TOO_LARGE", "4194304"},
		{"a chunk", http.MethodPatch, loc, "application/octet-stream", http.StatusBadRequest, "SIZE_INVALID", "1073741824"},
		{"a blob whole", http.MethodPost, "/v2/hooks/f/blobs/uploads/?digest=" + sha([]byte("x")), "application/octet-stream", http.StatusBadRequest, "SIZE_INVALID", "1073741824"},
		{"the end of an upload", http.MethodPut, withQuery(loc, "digest="+sha([]byte("x"))), "application/octet-stream", http.StatusBadRequest, "SIZE_INVALID", "1073741824"},
	} {
		status, body := declareHuge(t, h.registry, tc.method, tc.path, h.hooks, tc.contentType, terabyte)
		if status != tc.status || ociError(body) != tc.code || !strings.Contains(string(body), tc.names) {
			t.Errorf("%s declaring %d bytes: %d %s, want %d %s naming %s", tc.name, int64(terabyte), status, body, tc.status, tc.code, tc.names)
		}
	}

	// A manifest over the bound, sent without a declared length.
	huge := append([]byte(`{"schemaVersion":2,"annotations":{"x":"`), bytes.Repeat([]byte("x"), 5<<20)...)
	huge = append(huge, `"}}`...)
	req, err := http.NewRequest(http.MethodPut, h.env.URL+"/v2/hooks/f/manifests/v2", io.MultiReader(bytes.NewReader(huge)))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("core", h.hooks)
	req.Header.Set("Content-Type", manifestType)
	res, err := h.env.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if req.ContentLength != -1 && req.ContentLength != 0 {
		t.Fatalf("the request declared a length (%d): it tests the declared case again", req.ContentLength)
	}
	if res.StatusCode != http.StatusBadRequest || ociError(out) != "MANIFEST_INVALID" || !strings.Contains(string(out), "4194304") {
		t.Errorf("a 5 MiB manifest without a length: %d %s, want 400 MANIFEST_INVALID naming 4194304", res.StatusCode, out)
	}

	// Descriptors declaring sizes the blobs do not have.
	raw, err := h.img.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	l := mustLayers(t, h.img)[0]
	layerDigest := mustDigest(t, l).String()
	layerSize, err := l.Size()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int64
	}{
		{"a layer of 2^62 bytes", 1 << 62},
		{"a layer of 8 GiB (past the 4 GiB an image may unpack to)", 8 << 30},
		{"a layer one byte longer than it is", layerSize + 1},
		{"a layer of -1 bytes", -1},
	} {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		m["layers"].([]any)[0].(map[string]any)["size"] = tc.size
		body, _ := json.Marshal(m)
		for _, ref := range []string{"v2", sha(body)} {
			res, out := h.raw(http.MethodPut, "/v2/hooks/f/manifests/"+ref, h.hooks, map[string]string{"Content-Type": manifestType}, body)
			if res.StatusCode != http.StatusBadRequest || ociError(out) != "SIZE_INVALID" || !strings.Contains(string(out), layerDigest) {
				t.Errorf("%s, put as %s: %d %s, want 400 SIZE_INVALID naming the layer", tc.name, ref, res.StatusCode, out)
			}
		}
	}
	h.unchanged(t)
	// The registry serves on: the next push succeeds.
	next := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb('v3', null);`}))
	h.mustPush("hooks/f:v3", next, h.hooks)
}

// declareHuge sends a request that declares a body of size bytes and
// sends 64 of them, and reads the answer: a server that waited for the
// rest would not answer (the read's deadline, a minute, bounds a broken
// run; it is no time the test expects).
func declareHuge(t *testing.T, r *registry, method, path, pw, contentType string, size int64) (int, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", r.host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, r.env.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("core", pw)
	if _, err := fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
		method, req.URL.RequestURI(), r.host, req.Header.Get("Authorization"), contentType, size, bytes.Repeat([]byte("{"), 64)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		t.Fatalf("%s %s declaring %d bytes: no answer (%v): the server waits for the body", method, path, size, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}
