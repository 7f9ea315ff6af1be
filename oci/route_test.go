package oci_test

import (
	"net/http"
	"testing"

	"github.com/corehq/core/server/servertest"
)

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
