package oci_test

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// putBlob uploads data to repo under the digest d (POST, then PUT).
func putBlob(t *testing.T, r *registry, repo, pw string, data []byte, d string) *http.Response {
	t.Helper()
	loc := startUpload(t, r, repo, pw)
	res, out := r.raw(http.MethodPut, withQuery(loc, "digest="+d), pw, map[string]string{"Content-Type": "application/octet-stream"}, data)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("uploading %s: %d %s", d, res.StatusCode, out)
	}
	return res
}

// putManifest pushes a manifest (as JSON of m) under ref (a tag or
// digest) and returns the answer and the manifest's bytes.
func putManifest(t *testing.T, r *registry, repo, ref, pw string, m any) (*http.Response, []byte, []byte) {
	t.Helper()
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if ref == "" {
		ref = sha(body)
	}
	res, out := r.raw(http.MethodPut, "/v2/"+repo+"/manifests/"+ref, pw, map[string]string{"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, body)
	return res, out, body
}

// descriptor is an OCI descriptor as the tests write them.
func descriptor(mediaType string, data []byte) map[string]any {
	return map[string]any{"mediaType": mediaType, "digest": sha(data), "size": len(data)}
}

// artifactManifest is an artifact of artifactType (a config of its own
// type) with one layer, optionally referring to subject.
func artifactManifest(artifactType string, config, layer []byte, subject map[string]any) map[string]any {
	m := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor(artifactType, config),
		"layers":        []any{descriptor("application/octet-stream", layer)},
		"annotations":   map[string]any{"org.example.note": artifactType},
	}
	if subject != nil {
		m["subject"] = subject
	}
	return m
}

// TestReferrersAndArtifacts: manifests that refer to another (subject)
// are acknowledged with OCI-Subject and listed by the referrers API, with
// the artifactType filter; a deleted one leaves the list. Artifacts are
// stored under a tag like images, and are no function version (one that
// replaces a function image's tag removes that version). A manifest with
// a non-distributable layer (urls, not pushed) is stored.
func TestReferrersAndArtifacts(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("refs")
	const repo = "refs/echo"

	// The subject: a JavaScript function image.
	img := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb({ok: true}, null);`}))
	r.mustPush(repo+":v1", img, pw)
	subjectDigest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := img.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	subject := descriptor("application/vnd.oci.image.manifest.v1+json", raw)
	if subject["digest"] != subjectDigest.String() {
		t.Fatalf("subject digest %v, want %s", subject["digest"], subjectDigest)
	}

	// Two referrers of two artifact types, pushed by digest.
	config, sig, sbom := []byte(`{}`), []byte("signature"), []byte(`{"sbom": true}`)
	for _, b := range [][]byte{config, sig, sbom} {
		putBlob(t, r, repo, pw, b, sha(b))
	}
	var referrers []string
	for _, c := range []struct{ artifactType string }{{"application/vnd.example.signature"}, {"application/vnd.example.sbom"}} {
		blob := sig
		if strings.HasSuffix(c.artifactType, "sbom") {
			blob = sbom
		}
		res, out, body := putManifest(t, r, repo, "", pw, artifactManifest(c.artifactType, config, blob, subject))
		if res.StatusCode != http.StatusCreated || res.Header.Get("OCI-Subject") != subjectDigest.String() {
			t.Fatalf("pushing a %s: %d OCI-Subject %q %s", c.artifactType, res.StatusCode, res.Header.Get("OCI-Subject"), out)
		}
		referrers = append(referrers, sha(body))
	}

	list := func(query string) (*http.Response, []string, []string) {
		t.Helper()
		res, out := r.raw(http.MethodGet, "/v2/"+repo+"/referrers/"+subjectDigest.String()+query, pw, nil, nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/vnd.oci.image.index.v1+json" {
			t.Fatalf("referrers%s: %d %q %s", query, res.StatusCode, res.Header.Get("Content-Type"), out)
		}
		var idx struct {
			SchemaVersion int    `json:"schemaVersion"`
			MediaType     string `json:"mediaType"`
			Manifests     []struct {
				Digest       string            `json:"digest"`
				ArtifactType string            `json:"artifactType"`
				Annotations  map[string]string `json:"annotations"`
			} `json:"manifests"`
		}
		if err := json.Unmarshal(out, &idx); err != nil || idx.SchemaVersion != 2 || idx.MediaType != "application/vnd.oci.image.index.v1+json" {
			t.Fatalf("referrers%s: %v %s", query, err, out)
		}
		var digests, types []string
		for _, m := range idx.Manifests {
			digests = append(digests, m.Digest)
			types = append(types, m.ArtifactType)
			if m.Annotations["org.example.note"] != m.ArtifactType {
				t.Errorf("referrer %s lost its annotations: %v", m.Digest, m.Annotations)
			}
		}
		return res, digests, types
	}
	_, digests, types := list("")
	if len(digests) != 2 || !slices.Contains(digests, referrers[0]) || !slices.Contains(digests, referrers[1]) ||
		!slices.Contains(types, "application/vnd.example.signature") || !slices.Contains(types, "application/vnd.example.sbom") {
		t.Errorf("referrers: %v %v, want %v", digests, types, referrers)
	}
	res, digests, _ := list("?artifactType=application/vnd.example.sbom")
	if len(digests) != 1 || digests[0] != referrers[1] || res.Header.Get("OCI-Filters-Applied") != "artifactType" {
		t.Errorf("referrers of type sbom: %v (filters %q), want %s", digests, res.Header.Get("OCI-Filters-Applied"), referrers[1])
	}
	// A digest nothing refers to: an empty list; not a digest: 400.
	res, out := r.raw(http.MethodGet, "/v2/"+repo+"/referrers/"+sha([]byte("nothing")), pw, nil, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(out), `"manifests":[]`) {
		t.Errorf("referrers of an unknown digest: %d %s, want 200 and none", res.StatusCode, out)
	}
	res, out = r.raw(http.MethodGet, "/v2/"+repo+"/referrers/sha256:nope", pw, nil, nil)
	if res.StatusCode != http.StatusBadRequest || ociError(out) != "DIGEST_INVALID" {
		t.Errorf("referrers of a bad digest: %d %s, want 400 DIGEST_INVALID", res.StatusCode, out)
	}
	// Another app's token may not list them.
	other := r.token("other")
	if res, out := r.raw(http.MethodGet, "/v2/"+repo+"/referrers/"+subjectDigest.String(), other, nil, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("another app's referrers: %d %s, want 403", res.StatusCode, out)
	}
	// A deleted referrer leaves the list.
	if res, out := r.raw(http.MethodDelete, "/v2/"+repo+"/manifests/"+referrers[0], pw, nil, nil); res.StatusCode != http.StatusAccepted {
		t.Fatalf("deleting a referrer: %d %s", res.StatusCode, out)
	}
	if _, digests, _ := list(""); len(digests) != 1 || digests[0] != referrers[1] {
		t.Errorf("after deleting one: %v, want [%s]", digests, referrers[1])
	}

	// An artifact pushed by tag is stored and is no function.
	res, out, _ = putManifest(t, r, repo, "sig1", pw, artifactManifest("application/vnd.example.signature", config, sig, nil))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("an artifact by tag: %d %s", res.StatusCode, out)
	}
	if res, out := r.raw(http.MethodGet, "/v2/"+repo+"/tags/list", pw, nil, nil); res.StatusCode != http.StatusOK || !strings.Contains(string(out), `"sig1"`) {
		t.Errorf("tags after the artifact: %d %s", res.StatusCode, out)
	}
	if st, body := r.env.Admin(http.MethodGet, "/apps/refs/functions/echo/sig1", nil); st != http.StatusNotFound {
		t.Errorf("the artifact's tag as a function version: %d %s, want 404", st, dump(body))
	}
	if st, body := r.env.Admin(http.MethodGet, "/apps/refs/functions/echo/v1", nil); st != http.StatusOK {
		t.Fatalf("the function image's version: %d %s, want 200", st, dump(body))
	}
	// Over a function image's tag (where the app allows overwriting), it
	// removes that function version.
	if st, body := r.env.Admin(http.MethodPatch, "/apps/refs/registry", map[string]any{"allowTagOverwrite": true}); st != http.StatusOK {
		t.Fatalf("allowing overwrites: %d %s", st, dump(body))
	}
	if res, out, _ := putManifest(t, r, repo, "v1", pw, artifactManifest("application/vnd.example.signature", config, sig, nil)); res.StatusCode != http.StatusCreated {
		t.Fatalf("an artifact over v1: %d %s", res.StatusCode, out)
	}
	if st, body := r.env.Admin(http.MethodGet, "/apps/refs/functions/echo/v1", nil); st != http.StatusNotFound {
		t.Errorf("v1 after an artifact took its tag: %d %s, want 404", st, dump(body))
	}

	// A non-distributable layer: named by URL, never pushed.
	foreign := map[string]any{"mediaType": "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
		"digest": sha([]byte("not pushed")), "size": 10, "urls": []string{"https://example.com/layer.tar.gz"}}
	cfg := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	putBlob(t, r, repo, pw, cfg, sha(cfg))
	m := map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": descriptor("application/vnd.oci.image.config.v1+json", cfg), "layers": []any{foreign}}
	for _, ref := range []string{"", "foreign"} {
		if res, out, _ := putManifest(t, r, repo, ref, pw, m); res.StatusCode != http.StatusCreated {
			t.Errorf("a manifest with a non-distributable layer (ref %q): %d %s, want 201", ref, res.StatusCode, out)
		}
	}
}

// TestSHA512Blobs: a blob pushed by its sha512 digest answers that
// digest (upload, HEAD, GET), and a manifest may name it.
func TestSHA512Blobs(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("long")
	data := blobData(5000)
	sum := sha512.Sum512(data)
	d := "sha512:" + hex.EncodeToString(sum[:])
	res := putBlob(t, r, "long/blobs", pw, data, d)
	if res.Header.Get("Docker-Content-Digest") != d || !strings.HasSuffix(res.Header.Get("Location"), "/blobs/"+d) {
		t.Errorf("upload by sha512: Docker-Content-Digest %q Location %q, want %s", res.Header.Get("Docker-Content-Digest"), res.Header.Get("Location"), d)
	}
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		res, out := r.raw(method, "/v2/long/blobs/blobs/"+d, pw, nil, nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Docker-Content-Digest") != d || (method == http.MethodGet && string(out) != string(data)) {
			t.Errorf("%s by sha512: %d %q, %d bytes", method, res.StatusCode, res.Header.Get("Docker-Content-Digest"), len(out))
		}
	}
	// The wrong content for a sha512 digest is refused.
	loc := startUpload(t, r, "long/blobs", pw)
	res, out := r.raw(http.MethodPut, withQuery(loc, "digest="+d), pw, map[string]string{"Content-Type": "application/octet-stream"}, []byte("other"))
	if res.StatusCode != http.StatusBadRequest || ociError(out) != "DIGEST_INVALID" {
		t.Errorf("other content under a sha512 digest: %d %s, want 400 DIGEST_INVALID", res.StatusCode, out)
	}
	// An artifact whose layer is named by its sha512 digest.
	config := []byte(`{}`)
	putBlob(t, r, "long/blobs", pw, config, sha(config))
	m := map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": descriptor("application/vnd.example.data", config),
		"layers": []any{map[string]any{"mediaType": "application/octet-stream", "digest": d, "size": len(data)}}}
	if res, out, _ := putManifest(t, r, "long/blobs", "data1", pw, m); res.StatusCode != http.StatusCreated {
		t.Errorf("a manifest naming a sha512 blob: %d %s", res.StatusCode, out)
	}
}
