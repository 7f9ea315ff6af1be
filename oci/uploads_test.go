package oci_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/corehq/core/oci"
)

// TestSweepUploads: an upload that stopped receiving is swept once its
// last write is UploadMaxAge old, an upload still receiving is not, and
// the one kept still finishes. The sweep's clock is its argument: it runs
// at the moment the abandoned upload's last write becomes UploadMaxAge
// old, while the live one wrote after that write.
//
// Hostile checklist 52: aborted uploads swept.
func TestSweepUploads(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("up")
	chunk := func(loc string, from int, data []byte) string {
		t.Helper()
		res, out := r.raw(http.MethodPatch, loc, pw, map[string]string{"Content-Type": "application/octet-stream",
			"Content-Range": fmt.Sprintf("%d-%d", from, from+len(data)-1)}, data)
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("sending a chunk: %d %s", res.StatusCode, out)
		}
		return res.Header.Get("Location")
	}
	first, second := []byte("the first half of a blob, "), []byte("and the second half")

	abandoned := chunk(startUpload(t, r, "up/f", pw), 0, first)
	lastWrite := time.Now()
	for !time.Now().After(lastWrite) { // the live upload writes strictly after
	}
	live := chunk(startUpload(t, r, "up/g", pw), 0, first)

	// Before UploadMaxAge has passed since either write, nothing goes.
	maxAge := oci.DefaultConfig().UploadMaxAge
	if n, err := r.env.Images.SweepUploads(context.Background(), lastWrite.Add(maxAge-time.Minute)); err != nil || n != 0 {
		t.Fatalf("a sweep before the age: %d removed, %v", n, err)
	}
	n, err := r.env.Images.SweepUploads(context.Background(), lastWrite.Add(maxAge))
	if err != nil || n != 1 {
		t.Fatalf("the sweep: %d removed, %v; want the abandoned upload", n, err)
	}
	if res, out := r.raw(http.MethodGet, abandoned, pw, nil, nil); res.StatusCode != http.StatusNotFound || ociError(out) != "BLOB_UPLOAD_UNKNOWN" {
		t.Errorf("the abandoned upload after the sweep: %d %s, want 404 BLOB_UPLOAD_UNKNOWN", res.StatusCode, out)
	}
	if res, out := r.raw(http.MethodGet, live, pw, nil, nil); res.StatusCode != http.StatusNoContent {
		t.Errorf("the live upload after the sweep: %d %s, want 204", res.StatusCode, out)
	}
	live = chunk(live, len(first), second)
	whole := append(append([]byte{}, first...), second...)
	if res, out := r.raw(http.MethodPut, withQuery(live, "digest="+sha(whole)), pw, nil, nil); res.StatusCode != http.StatusCreated {
		t.Fatalf("finishing the live upload: %d %s", res.StatusCode, out)
	}
	if res, out := r.raw(http.MethodGet, "/v2/up/g/blobs/"+sha(whole), pw, nil, nil); res.StatusCode != http.StatusOK || string(out) != string(whole) {
		t.Errorf("the blob of the live upload: %d %q", res.StatusCode, out)
	}
	// Nothing left to sweep.
	if n, err := r.env.Images.SweepUploads(context.Background(), time.Now().Add(24*time.Hour)); err != nil || n != 0 {
		t.Errorf("a sweep after: %d removed, %v", n, err)
	}
}
