package oci_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/oci"
	"github.com/corehq/core/server/servertest"
)

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
