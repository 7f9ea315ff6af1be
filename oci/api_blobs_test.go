package oci_test

import (
	"net/http"
	"testing"
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
