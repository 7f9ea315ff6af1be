package oci_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/oci"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/untrusted"
	"github.com/google/go-cmp/cmp"
)

// TestDeleteBlob: deleting a blob unlinks it from the repository (202);
// it is then unknown there, and deleting it again is 404 BLOB_UNKNOWN.
// Another repository that links the same blob still serves it.
func TestDeleteBlob(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("del")
	data := []byte("a blob in two repositories")
	putBlob(t, r, "del/f", pw, data, sha(data))
	putBlob(t, r, "del/g", pw, data, sha(data))
	res, out := r.raw(http.MethodDelete, "/v2/del/f/blobs/"+sha(data), pw, nil, nil)
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("deleting the blob: %d %s", res.StatusCode, out)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		if res, out := r.raw(method, "/v2/del/f/blobs/"+sha(data), pw, nil, nil); res.StatusCode != http.StatusNotFound || ociError(out) != "BLOB_UNKNOWN" {
			t.Errorf("%s of the deleted blob: %d %s, want 404 BLOB_UNKNOWN", method, res.StatusCode, out)
		}
	}
	if res, out := r.raw(http.MethodGet, "/v2/del/g/blobs/"+sha(data), pw, nil, nil); res.StatusCode != http.StatusOK || string(out) != string(data) {
		t.Errorf("the blob through the other repository: %d %q", res.StatusCode, out)
	}
}

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

// TestListPages: tags and the catalog come in pages of ?n=, each with a
// Link to the next one while there is more; a page size that is not a
// number from 0, or a catalog page over 1,000, is PAGINATION_NUMBER_INVALID.
func TestListPages(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("pg")
	img := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb(1, null);`}))
	for _, ref := range []string{"pg/a:v1", "pg/a:v2", "pg/a:v3", "pg/b:v1"} {
		r.mustPush(ref, img, pw)
	}
	// walk follows the Links from path and returns the pages' items.
	walk := func(path, pw, field string) [][]string {
		t.Helper()
		var pages [][]string
		for path != "" && len(pages) < 10 {
			res, out := r.raw(http.MethodGet, path, pw, nil, nil)
			var body map[string]json.RawMessage
			var items []string
			if res.StatusCode != http.StatusOK || json.Unmarshal(out, &body) != nil || json.Unmarshal(body[field], &items) != nil {
				t.Fatalf("GET %s: %d %s", path, res.StatusCode, out)
			}
			pages = append(pages, items)
			path = ""
			if link := res.Header.Get("Link"); link != "" {
				next, rest, ok := strings.Cut(strings.TrimPrefix(link, "<"), ">")
				if !ok || rest != `; rel="next"` {
					t.Fatalf("Link %q", link)
				}
				path = next
			}
		}
		return pages
	}
	if diff := cmp.Diff([][]string{{"v1", "v2"}, {"v3"}}, walk("/v2/pg/a/tags/list?n=2", pw, "tags")); diff != "" {
		t.Errorf("tags in pages of 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"v1", "v2", "v3"}}, walk("/v2/pg/a/tags/list", pw, "tags")); diff != "" {
		t.Errorf("tags in one page (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{}}, walk("/v2/pg/a/tags/list?n=0", pw, "tags")); diff != "" {
		t.Errorf("tags in pages of 0 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"pg/a"}, {"pg/b"}}, walk("/v2/_catalog?n=1", servertest.AdminToken, "repositories")); diff != "" {
		t.Errorf("the catalog in pages of 1 (-want +got):\n%s", diff)
	}
	for _, p := range []string{"/v2/pg/a/tags/list?n=-1", "/v2/pg/a/tags/list?n=x", "/v2/_catalog?n=1001", "/v2/_catalog?n=-2"} {
		if res, out := r.raw(http.MethodGet, p, servertest.AdminToken, nil, nil); res.StatusCode != http.StatusBadRequest || ociError(out) != "PAGINATION_NUMBER_INVALID" {
			t.Errorf("GET %s: %d %s, want 400 PAGINATION_NUMBER_INVALID", p, res.StatusCode, out)
		}
	}
}

// TestUploadRequests covers what the conformance suites leave out of the
// upload protocol: cancelling an upload, a Location whose state was
// tampered with or belongs to another upload, a chunk that is not
// application/octet-stream or whose Content-Range cannot be read or does
// not match its body, and a body of unknown length over the bound. Each
// is a 4xx naming the problem, and the upload stays usable where it can.
func TestUploadRequests(t *testing.T) {
	t.Parallel()
	cfg := oci.DefaultConfig()
	cfg.MaxRequestBytes = 1000
	r := start(t, servertest.WithImages(cfg, nil))
	pw := r.token("up")
	octets := map[string]string{"Content-Type": "application/octet-stream"}
	expect := func(what string, res *http.Response, out []byte, status int, code, says string) {
		t.Helper()
		if res.StatusCode != status || ociError(out) != code || !strings.Contains(ociMessage(out), says) {
			t.Errorf("%s: %d %s, want %d %s saying %q", what, res.StatusCode, out, status, code, says)
		}
	}

	// Cancelled: 204, then unknown.
	loc := startUpload(t, r, "up/f", pw)
	res, out := r.raw(http.MethodDelete, loc, pw, nil, nil)
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Docker-Upload-UUID") == "" {
		t.Errorf("cancelling an upload: %d %s", res.StatusCode, out)
	}
	res, out = r.raw(http.MethodGet, loc, pw, nil, nil)
	expect("the cancelled upload", res, out, http.StatusNotFound, "BLOB_UPLOAD_UNKNOWN", "not in progress")

	// A Location's state must be the registry's, for this upload.
	loc = startUpload(t, r, "up/f", pw)
	other := startUpload(t, r, "up/f", pw)
	base, state, _ := strings.Cut(loc, "?_state=")
	_, otherState, _ := strings.Cut(other, "?_state=")
	for what, l := range map[string]string{
		"no state":            base,
		"a tampered state":    base + "?_state=" + strings.Replace(state, state[10:11], string(state[10]^1), 1),
		"another upload's":    base + "?_state=" + otherState,
		"not base64 at all!!": base + "?_state=%%%",
	} {
		res, out := r.raw(http.MethodPatch, l, pw, octets, []byte("data"))
		expect(what, res, out, http.StatusNotFound, "BLOB_UPLOAD_INVALID", "continue an upload at the Location of its last answer")
	}

	// Chunks that cannot be appended; the upload is still at 0 after
	// them.
	for _, c := range []struct {
		what    string
		headers map[string]string
		status  int
		code    string
		says    string
	}{
		{"a chunk of another type", map[string]string{"Content-Type": "text/html"}, http.StatusBadRequest, "BLOB_UPLOAD_INVALID", `not "text/html"`},
		{"an unreadable range", map[string]string{"Content-Range": "bytes=0-3"}, http.StatusBadRequest, "BLOB_UPLOAD_INVALID", "<start>-<end>"},
		{"a range longer than the body", map[string]string{"Content-Range": "0-9"}, http.StatusBadRequest, "SIZE_INVALID", "Content-Length says 4"},
		{"a range after the end", map[string]string{"Content-Range": "4-7"}, http.StatusRequestedRangeNotSatisfiable, "RANGE_INVALID", "starts at 0"},
	} {
		res, out := r.raw(http.MethodPatch, loc, pw, c.headers, []byte("data"))
		expect(c.what, res, out, c.status, c.code, c.says)
	}
	res, out = r.raw(http.MethodGet, loc, pw, nil, nil)
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Range") != "0-0" {
		t.Errorf("the upload after refused chunks: %d Range %q %s", res.StatusCode, res.Header.Get("Range"), out)
	}

	// A body of unknown length (chunked) over the bound: SIZE_INVALID, as
	// for a declared one.
	req, err := http.NewRequest(http.MethodPatch, r.env.URL+loc, bytes.NewReader(make([]byte, 1500)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1 // unknown: net/http sends it chunked
	req.SetBasicAuth(oci.User, pw)
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err = r.env.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ = io.ReadAll(res.Body)
	res.Body.Close()
	expect("a chunked body over the bound", res, out, http.StatusBadRequest, "SIZE_INVALID", "at most 1000 bytes")

	// The upload still finishes with a chunk within the bound.
	data := []byte("the whole blob")
	res, out = r.raw(http.MethodPut, withQuery(loc, "digest="+sha(data)), pw, octets, data)
	if res.StatusCode != http.StatusCreated || res.Header.Get("Location") != "/v2/up/f/blobs/"+sha(data) {
		t.Fatalf("finishing the upload: %d %v %s", res.StatusCode, res.Header, out)
	}
	// Without a digest, the PUT is refused and the upload stays.
	loc = startUpload(t, r, "up/f", pw)
	res, out = r.raw(http.MethodPut, loc, pw, octets, data)
	expect("a PUT without a digest", res, out, http.StatusBadRequest, "DIGEST_INVALID", "?digest=")
}

// TestRoutes: each endpoint answers the methods it serves; another
// method is 405 UNSUPPORTED with Allow (OPTIONS: 200 with Allow); a path
// under /v2/ that is no endpoint is 404 for any authenticated caller; the
// API check answers any method.
func TestRoutes(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("rt")
	blob := []byte("a blob")
	putBlob(t, r, "rt/f", pw, blob, sha(blob))
	cases := []struct {
		method, path, pw string
		status           int
		code, allow      string
	}{
		{http.MethodGet, "/v2/", pw, http.StatusOK, "", ""},
		{http.MethodPost, "/v2/", pw, http.StatusOK, "", ""},
		{http.MethodGet, "/v2", pw, http.StatusOK, "", ""},
		{http.MethodPost, "/v2/rt/f/tags/list", pw, http.StatusMethodNotAllowed, "UNSUPPORTED", "GET"},
		{http.MethodHead, "/v2/rt/f/tags/list", pw, http.StatusMethodNotAllowed, "", "GET"},
		{http.MethodOptions, "/v2/rt/f/tags/list", pw, http.StatusOK, "", "GET"},
		{http.MethodDelete, "/v2/_catalog", servertest.AdminToken, http.StatusMethodNotAllowed, "UNSUPPORTED", "GET"},
		{http.MethodPatch, "/v2/rt/f/manifests/v1", pw, http.StatusMethodNotAllowed, "UNSUPPORTED", "DELETE, GET, HEAD, PUT"},
		{http.MethodPut, "/v2/rt/f/blobs/" + sha(blob), pw, http.StatusMethodNotAllowed, "UNSUPPORTED", "DELETE, GET, HEAD"},
		{http.MethodPost, "/v2/rt/f/blobs/uploads/0b0b0b0b-0000-4000-8000-000000000000", pw, http.StatusMethodNotAllowed, "UNSUPPORTED",
			"DELETE, GET, HEAD, PATCH, PUT"},
		{http.MethodPatch, "/v2/rt/f/blobs/uploads/", pw, http.StatusNotFound, "BLOB_UPLOAD_UNKNOWN", ""},
		{http.MethodGet, "/v2/rt/f/blobs/not-a-digest", pw, http.StatusNotFound, "UNSUPPORTED", ""},
		{http.MethodGet, "/v2/rt/f/blobs/sha256:nothex", pw, http.StatusBadRequest, "DIGEST_INVALID", ""},
		{http.MethodGet, "/v2/rt/f/blobs/uploads/..", pw, http.StatusNotFound, "UNSUPPORTED", ""},
		{http.MethodGet, "/v2/rt/f/blobs/uploads/a/b", pw, http.StatusNotFound, "UNSUPPORTED", ""},
		{http.MethodGet, "/v2/rt/f/manifests/.not-a-tag", pw, http.StatusNotFound, "MANIFEST_UNKNOWN", ""},
		{http.MethodGet, "/v2/rt/f/manifests/sha256:nothex", pw, http.StatusBadRequest, "DIGEST_INVALID", ""},
		{http.MethodGet, "/v2/nothing-here", pw, http.StatusNotFound, "UNSUPPORTED", ""},
		{http.MethodGet, "/v2/rt/f/elsewhere/x", pw, http.StatusNotFound, "UNSUPPORTED", ""},
		{http.MethodGet, "/v2/nothing-here", "", http.StatusUnauthorized, "UNAUTHORIZED", ""},
	}
	for _, tc := range cases {
		res, out := r.raw(tc.method, tc.path, tc.pw, nil, nil)
		if res.StatusCode != tc.status || ociError(out) != tc.code || res.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d %s Allow %q, want %d %s Allow %q", tc.method, tc.path, res.StatusCode, out, res.Header.Get("Allow"),
				tc.status, tc.code, tc.allow)
		}
		if res.Header.Get("Docker-Distribution-API-Version") != "registry/2.0" {
			t.Errorf("%s %s: no Docker-Distribution-API-Version", tc.method, tc.path)
		}
	}
}

// TestAnswersAreSandboxed: every answer of /v2/, whatever the endpoint
// and whether it succeeds or fails, carries the sandboxing
// Content-Security-Policy and nosniff, so that a blob opened in a browser
// can never act as the service's origin (where the console keeps the
// admin token); a browser's request for a service worker's script is
// refused.
func TestAnswersAreSandboxed(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("box")
	page := []byte("<html><script>alert(sessionStorage.getItem('core-admin-token'))</script></html>")
	putBlob(t, r, "box/page", pw, page, sha(page))
	img := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb(1, null);`}))
	r.mustPush("box/page:v1", img, pw)
	dgst, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	loc := startUpload(t, r, "box/page", pw)
	html := map[string]string{"Accept": "text/html"}
	manifest := map[string]string{"Accept": "application/vnd.oci.image.manifest.v1+json"}

	cases := []struct {
		name, method, path, pw string
		headers                map[string]string
		status                 int
	}{
		{"no credentials", http.MethodGet, "/v2/", "", nil, http.StatusUnauthorized},
		{"API check", http.MethodGet, "/v2/", pw, nil, http.StatusOK},
		{"catalog denied", http.MethodGet, "/v2/_catalog", pw, nil, http.StatusForbidden},
		{"catalog", http.MethodGet, "/v2/_catalog", servertest.AdminToken, nil, http.StatusOK},
		{"blob", http.MethodGet, "/v2/box/page/blobs/" + sha(page), pw, html, http.StatusOK},
		{"blob HEAD", http.MethodHead, "/v2/box/page/blobs/" + sha(page), pw, html, http.StatusOK},
		{"blob range", http.MethodGet, "/v2/box/page/blobs/" + sha(page), pw, map[string]string{"Range": "bytes=0-5"}, http.StatusPartialContent},
		{"unknown blob", http.MethodGet, "/v2/box/page/blobs/" + sha([]byte("none")), pw, nil, http.StatusNotFound},
		{"manifest", http.MethodGet, "/v2/box/page/manifests/v1", pw, manifest, http.StatusOK},
		{"manifest by digest HEAD", http.MethodHead, "/v2/box/page/manifests/" + dgst.String(), pw, manifest, http.StatusOK},
		{"tags", http.MethodGet, "/v2/box/page/tags/list", pw, nil, http.StatusOK},
		{"referrers", http.MethodGet, "/v2/box/page/referrers/" + dgst.String(), pw, nil, http.StatusOK},
		{"upload status", http.MethodGet, loc, pw, nil, http.StatusNoContent},
		{"upload start", http.MethodPost, "/v2/box/page/blobs/uploads/", pw, nil, http.StatusAccepted},
		{"bad name", http.MethodGet, "/v2/Box/page/tags/list", pw, nil, http.StatusBadRequest},
		{"another app", http.MethodGet, "/v2/other/page/tags/list", pw, nil, http.StatusForbidden},
		{"service worker script", http.MethodGet, "/v2/box/page/blobs/" + sha(page), pw,
			map[string]string{"Service-Worker": "script", "Sec-Fetch-Dest": "serviceworker"}, http.StatusForbidden},
	}
	for _, tc := range cases {
		res, out := r.raw(tc.method, tc.path, tc.pw, tc.headers, nil)
		if res.StatusCode != tc.status {
			t.Errorf("%s: %s %s: %d %s, want %d", tc.name, tc.method, tc.path, res.StatusCode, out, tc.status)
		}
		if got := res.Header.Get("Content-Security-Policy"); got != untrusted.Policy {
			t.Errorf("%s: Content-Security-Policy %q, want %q", tc.name, got, untrusted.Policy)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", tc.name, got)
		}
		if tc.name == "service worker script" && ociError(out) != "DENIED" {
			t.Errorf("%s: %s, want DENIED", tc.name, out)
		}
	}
}
