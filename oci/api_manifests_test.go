package oci_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestManifestRequests covers what the conformance suites leave out of
// the manifest endpoints: If-None-Match, an Accept header that does not
// allow the manifest's type, a body that is no manifest of its declared
// type, a layer URL that is not http or https (MANIFEST_INVALID, where
// distribution answers 500), and deleting a tag that is not there.
func TestManifestRequests(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("mf")
	img := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb(1, null);`}))
	r.mustPush("mf/f:v1", img, pw)
	dgst, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ociManifest := "application/vnd.oci.image.manifest.v1+json"

	res, out := r.raw(http.MethodGet, "/v2/mf/f/manifests/v1", pw, map[string]string{"Accept": ociManifest, "If-None-Match": `"` + dgst.String() + `"`}, nil)
	if res.StatusCode != http.StatusNotModified || len(out) != 0 {
		t.Errorf("If-None-Match of the manifest's digest: %d %s, want 304", res.StatusCode, out)
	}
	res, out = r.raw(http.MethodGet, "/v2/mf/f/manifests/v1", pw, map[string]string{"Accept": "application/vnd.docker.distribution.manifest.v2+json"}, nil)
	if res.StatusCode != http.StatusNotFound || ociError(out) != "MANIFEST_UNKNOWN" || !strings.Contains(ociMessage(out), "does not support OCI manifests") {
		t.Errorf("an OCI manifest to a client that accepts only Docker's: %d %s", res.StatusCode, out)
	}

	cfg := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	putBlob(t, r, "mf/f", pw, cfg, sha(cfg))
	ftp := map[string]any{"schemaVersion": 2, "mediaType": ociManifest,
		"config": descriptor("application/vnd.oci.image.config.v1+json", cfg),
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
			"digest": sha([]byte("elsewhere")), "size": 9, "urls": []string{"ftp://example.com/layer.tar.gz"}}}}
	res, out, _ = putManifest(t, r, "mf/f", "", pw, ftp)
	if res.StatusCode != http.StatusBadRequest || ociError(out) != "MANIFEST_INVALID" || !strings.Contains(ociMessage(out), "URL") {
		t.Errorf("a layer named by an ftp URL: %d %s, want 400 MANIFEST_INVALID", res.StatusCode, out)
	}
	res, out = r.raw(http.MethodPut, "/v2/mf/f/manifests/v2", pw, map[string]string{"Content-Type": ociManifest}, []byte(`{"schemaVersion": 2, "layers": 7}`))
	if res.StatusCode != http.StatusBadRequest || ociError(out) != "MANIFEST_INVALID" {
		t.Errorf("a body that is no manifest: %d %s, want 400 MANIFEST_INVALID", res.StatusCode, out)
	}
	res, out = r.raw(http.MethodDelete, "/v2/mf/f/manifests/v9", pw, nil, nil)
	if res.StatusCode != http.StatusNotFound || ociError(out) != "MANIFEST_UNKNOWN" {
		t.Errorf("deleting a tag that is not there: %d %s, want 404 MANIFEST_UNKNOWN", res.StatusCode, out)
	}
	// Deleting the manifest by digest removes the tags naming it.
	if res, out := r.raw(http.MethodDelete, "/v2/mf/f/manifests/"+dgst.String(), pw, nil, nil); res.StatusCode != http.StatusAccepted {
		t.Fatalf("deleting by digest: %d %s", res.StatusCode, out)
	}
	res, out = r.raw(http.MethodGet, "/v2/mf/f/tags/list", pw, nil, nil)
	if res.StatusCode != http.StatusOK || strings.Contains(string(out), `"v1"`) {
		t.Errorf("tags after deleting the manifest v1 named: %d %s", res.StatusCode, out)
	}
}
