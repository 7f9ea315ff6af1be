package oci_test

import (
	"net/http"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/untrusted"
)

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
