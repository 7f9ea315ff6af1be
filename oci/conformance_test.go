package oci_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/corehq/core/oci/docfs"
	"github.com/corehq/core/server/servertest"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// blobData is content of several store chunks, so that uploads and reads
// cross chunk boundaries.
func blobData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i/7)
	}
	return b
}

// startUpload opens an upload session and returns its location.
func startUpload(t *testing.T, r *registry, repo, pw string) string {
	t.Helper()
	res, out := r.raw(http.MethodPost, "/v2/"+repo+"/blobs/uploads/", pw, nil, nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusAccepted || loc == "" || res.Header.Get("Docker-Upload-UUID") == "" {
		t.Fatalf("starting an upload: %d %q %s", res.StatusCode, loc, out)
	}
	return loc
}

// withQuery appends a query parameter to an upload location.
func withQuery(loc, kv string) string {
	if strings.Contains(loc, "?") {
		return loc + "&" + kv
	}
	return loc + "?" + kv
}

// TestConformance covers the OCI Distribution cases of push and pull
// that apply to the registry, against a real cored, with raw requests
// where the case is about the protocol's details and with
// go-containerregistry's client where it is about a whole image.
func TestConformance(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("conf")
	admin := servertest.AdminToken

	t.Run("API version check", func(t *testing.T) {
		res, _ := r.raw(http.MethodGet, "/v2/", pw, nil, nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Docker-Distribution-API-Version") != "registry/2.0" {
			t.Errorf("GET /v2/: %d %v", res.StatusCode, res.Header)
		}
	})

	t.Run("chunked upload", func(t *testing.T) {
		data := blobData(2*docfs.ChunkSize + 4321)
		loc := startUpload(t, r, "conf/chunks", pw)
		cuts := []int{0, 1000, docfs.ChunkSize + 17, len(data)}
		for i := 0; i+1 < len(cuts); i++ {
			part := data[cuts[i]:cuts[i+1]]
			res, out := r.raw(http.MethodPatch, loc, pw, map[string]string{
				"Content-Type":  "application/octet-stream",
				"Content-Range": fmt.Sprintf("%d-%d", cuts[i], cuts[i+1]-1),
			}, part)
			if res.StatusCode != http.StatusAccepted || res.Header.Get("Range") != fmt.Sprintf("0-%d", cuts[i+1]-1) {
				t.Fatalf("chunk %d: %d Range %q %s", i, res.StatusCode, res.Header.Get("Range"), out)
			}
			loc = res.Header.Get("Location")
			if i == 0 {
				// A chunk that does not start where the upload is: 416.
				res, out := r.raw(http.MethodPatch, loc, pw, map[string]string{
					"Content-Type": "application/octet-stream", "Content-Range": "5-9"}, []byte("12345"))
				if res.StatusCode != http.StatusRequestedRangeNotSatisfiable {
					t.Errorf("out-of-order chunk: %d %s, want 416", res.StatusCode, out)
				}
				// The upload's status says how far it is.
				res, out = r.raw(http.MethodGet, loc, pw, nil, nil)
				if res.StatusCode != http.StatusNoContent || res.Header.Get("Range") != "0-999" {
					t.Errorf("upload status: %d Range %q %s", res.StatusCode, res.Header.Get("Range"), out)
				}
			}
		}
		res, out := r.raw(http.MethodPut, withQuery(loc, "digest="+sha(data)), pw, nil, nil)
		if res.StatusCode != http.StatusCreated || res.Header.Get("Docker-Content-Digest") != sha(data) {
			t.Fatalf("closing the upload: %d %s", res.StatusCode, out)
		}
		res, _ = r.raw(http.MethodHead, "/v2/conf/chunks/blobs/"+sha(data), pw, nil, nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Length") != strconv.Itoa(len(data)) || res.Header.Get("Docker-Content-Digest") != sha(data) {
			t.Errorf("HEAD blob: %d %v", res.StatusCode, res.Header)
		}
		res, got := r.raw(http.MethodGet, "/v2/conf/chunks/blobs/"+sha(data), pw, nil, nil)
		if res.StatusCode != http.StatusOK || !bytes.Equal(got, data) {
			t.Errorf("GET blob: %d, %d bytes back of %d", res.StatusCode, len(got), len(data))
		}
		from, to := docfs.ChunkSize-10, docfs.ChunkSize+9
		res, got = r.raw(http.MethodGet, "/v2/conf/chunks/blobs/"+sha(data), pw, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", from, to)}, nil)
		if res.StatusCode != http.StatusPartialContent || !bytes.Equal(got, data[from:to+1]) {
			t.Errorf("GET blob with a range: %d %q", res.StatusCode, got)
		}
	})

	t.Run("monolithic upload", func(t *testing.T) {
		// The single-request push (POST with the digest and the body) is
		// optional in the OCI specification; distribution declines it with
		// 202 and an upload location, where clients PUT the blob.
		one := []byte("pushed after one POST")
		res, out := r.raw(http.MethodPost, "/v2/conf/mono/blobs/uploads/?digest="+sha(one), pw,
			map[string]string{"Content-Type": "application/octet-stream"}, one)
		if res.StatusCode != http.StatusCreated {
			if res.StatusCode != http.StatusAccepted || res.Header.Get("Location") == "" {
				t.Fatalf("POST with digest: %d %s, want 201, or 202 with a location", res.StatusCode, out)
			}
			res, out = r.raw(http.MethodPut, withQuery(res.Header.Get("Location"), "digest="+sha(one)), pw,
				map[string]string{"Content-Type": "application/octet-stream"}, one)
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("PUT after the declined single POST: %d %s", res.StatusCode, out)
			}
		}
		two := []byte("pushed in one PUT")
		loc := startUpload(t, r, "conf/mono", pw)
		res, out = r.raw(http.MethodPut, withQuery(loc, "digest="+sha(two)), pw, map[string]string{"Content-Type": "application/octet-stream"}, two)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("POST then PUT: %d %s", res.StatusCode, out)
		}
		for _, b := range [][]byte{one, two} {
			if res, got := r.raw(http.MethodGet, "/v2/conf/mono/blobs/"+sha(b), pw, nil, nil); res.StatusCode != http.StatusOK || !bytes.Equal(got, b) {
				t.Errorf("GET %s: %d %q", sha(b), res.StatusCode, got)
			}
		}
	})

	t.Run("a wrong digest is refused", func(t *testing.T) {
		data := []byte("the content")
		wrong := sha([]byte("other content"))
		loc := startUpload(t, r, "conf/digest", pw)
		res, out := r.raw(http.MethodPut, withQuery(loc, "digest="+wrong), pw, map[string]string{"Content-Type": "application/octet-stream"}, data)
		if res.StatusCode != http.StatusBadRequest || ociError(out) != "DIGEST_INVALID" {
			t.Errorf("PUT with a wrong digest: %d %s, want 400 DIGEST_INVALID", res.StatusCode, out)
		}
		for _, d := range []string{wrong, sha(data)} {
			if res, _ := r.raw(http.MethodHead, "/v2/conf/digest/blobs/"+d, pw, nil, nil); res.StatusCode != http.StatusNotFound {
				t.Errorf("HEAD %s after the refused upload: %d, want 404", d, res.StatusCode)
			}
		}
		res, out = r.raw(http.MethodPut, withQuery(startUpload(t, r, "conf/digest", pw), "digest=sha256:nothex"), pw,
			map[string]string{"Content-Type": "application/octet-stream"}, data)
		if res.StatusCode != http.StatusBadRequest || ociError(out) != "DIGEST_INVALID" {
			t.Errorf("a malformed digest: %d %s, want 400 DIGEST_INVALID", res.StatusCode, out)
		}
	})

	// An image pushed with go-containerregistry's client, then read back by
	// tag and by digest, whole and with HEAD.
	img := image(t,
		layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb({ok: true}, null);`}),
		layer(t, file{name: "function/data.json", data: `{"n": 1}`}))
	r.mustPush("conf/app:v1", img, pw)
	raw, err := img.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	dgst, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("manifest by tag and by digest", func(t *testing.T) {
		for _, ref := range []string{"v1", dgst.String()} {
			res, got := r.raw(http.MethodGet, "/v2/conf/app/manifests/"+ref, pw, map[string]string{"Accept": "application/vnd.oci.image.manifest.v1+json"}, nil)
			if res.StatusCode != http.StatusOK || !bytes.Equal(got, raw) || res.Header.Get("Docker-Content-Digest") != dgst.String() ||
				res.Header.Get("Content-Type") != "application/vnd.oci.image.manifest.v1+json" {
				t.Errorf("GET manifest %s: %d %v %s", ref, res.StatusCode, res.Header, got)
			}
			res, got = r.raw(http.MethodHead, "/v2/conf/app/manifests/"+ref, pw, map[string]string{"Accept": "application/vnd.oci.image.manifest.v1+json"}, nil)
			if res.StatusCode != http.StatusOK || len(got) != 0 || res.Header.Get("Content-Length") != strconv.Itoa(len(raw)) || res.Header.Get("Docker-Content-Digest") != dgst.String() {
				t.Errorf("HEAD manifest %s: %d %v", ref, res.StatusCode, res.Header)
			}
		}
		pulled, err := remote.Image(r.ref("conf/app:v1"), login(pw))
		if err != nil {
			t.Fatal(err)
		}
		if d, err := pulled.Digest(); err != nil || d != dgst {
			t.Fatalf("pulled digest %v (%v), want %v", d, err, dgst)
		}
		ls, err := pulled.Layers()
		if err != nil || len(ls) != 2 {
			t.Fatalf("pulled layers: %d (%v)", len(ls), err)
		}
		for i, l := range ls {
			rc, err := l.Compressed()
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			want, _ := img.LayerByDigest(mustDigest(t, l))
			wrc, _ := want.Compressed()
			wb, _ := io.ReadAll(wrc)
			if err != nil || !bytes.Equal(got, wb) {
				t.Errorf("layer %d differs from the one pushed (%v)", i, err)
			}
		}
		byDigest, err := remote.Image(r.ref("conf/app@"+dgst.String()), login(pw))
		if err != nil {
			t.Fatalf("pull by digest: %v", err)
		}
		if d, _ := byDigest.Digest(); d != dgst {
			t.Errorf("pull by digest: %v", d)
		}
		res, out := r.raw(http.MethodGet, "/v2/conf/app/tags/list", pw, nil, nil)
		var tags struct {
			Name string   `json:"name"`
			Tags []string `json:"tags"`
		}
		if res.StatusCode != http.StatusOK || json.Unmarshal(out, &tags) != nil || tags.Name != "conf/app" || len(tags.Tags) != 1 || tags.Tags[0] != "v1" {
			t.Errorf("tags/list: %d %s", res.StatusCode, out)
		}
	})

	t.Run("manifest put checks", func(t *testing.T) {
		ct := map[string]string{"Content-Type": "application/vnd.oci.image.manifest.v1+json"}
		res, out := r.raw(http.MethodPut, "/v2/conf/app/manifests/"+sha([]byte("not this")), pw, ct, raw)
		if res.StatusCode != http.StatusBadRequest || ociError(out) != "DIGEST_INVALID" {
			t.Errorf("PUT by a digest the body does not have: %d %s, want 400 DIGEST_INVALID", res.StatusCode, out)
		}
		res, out = r.raw(http.MethodPut, "/v2/conf/app/manifests/"+dgst.String(), pw, ct, raw)
		if res.StatusCode != http.StatusCreated || res.Header.Get("Docker-Content-Digest") != dgst.String() {
			t.Errorf("PUT by digest: %d %s", res.StatusCode, out)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		layers := m["layers"].([]any)
		layers[0].(map[string]any)["digest"] = sha([]byte("a layer nobody pushed"))
		missing, _ := json.Marshal(m)
		res, out = r.raw(http.MethodPut, "/v2/conf/app/manifests/v9", pw, ct, missing)
		if res.StatusCode != http.StatusBadRequest || ociError(out) != "MANIFEST_BLOB_UNKNOWN" {
			t.Errorf("a manifest naming a missing layer: %d %s, want 400 MANIFEST_BLOB_UNKNOWN", res.StatusCode, out)
		}
		res, out = r.raw(http.MethodPut, "/v2/conf/app/manifests/v_1:x", pw, ct, raw)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("a tag that is no version: %d %s", res.StatusCode, out)
		}
	})

	t.Run("404s", func(t *testing.T) {
		cases := []struct {
			method, path, code string
		}{
			{http.MethodGet, "/v2/conf/app/blobs/" + sha([]byte("unknown")), "BLOB_UNKNOWN"},
			{http.MethodHead, "/v2/conf/app/blobs/" + sha([]byte("unknown")), ""},
			{http.MethodGet, "/v2/conf/app/manifests/v404", "MANIFEST_UNKNOWN"},
			{http.MethodHead, "/v2/conf/app/manifests/v404", ""},
			{http.MethodGet, "/v2/conf/app/manifests/" + sha([]byte("unknown")), "MANIFEST_UNKNOWN"},
			{http.MethodGet, "/v2/conf/nothing/tags/list", "NAME_UNKNOWN"},
			{http.MethodGet, "/v2/conf/app/blobs/uploads/0b0b0b0b-0000-4000-8000-000000000000", "BLOB_UPLOAD_UNKNOWN"},
		}
		for _, tc := range cases {
			res, out := r.raw(tc.method, tc.path, pw, nil, nil)
			if res.StatusCode != http.StatusNotFound || ociError(out) != tc.code {
				t.Errorf("%s %s: %d %s, want 404 %s", tc.method, tc.path, res.StatusCode, out, tc.code)
			}
		}
		// The same blob through another app's repository: blobs are linked
		// to the repositories that pushed them.
		if res, _ := r.raw(http.MethodGet, "/v2/other/app/blobs/"+mustDigest(t, mustLayers(t, img)[0]).String(), admin, nil, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("a layer through a repository that never pushed it: %d, want 404", res.StatusCode)
		}
	})

	t.Run("repository names", func(t *testing.T) {
		for _, p := range []string{"/v2/conf/a/b/manifests/v1", "/v2/Conf/app/manifests/v1", "/v2/conf/-x/tags/list"} {
			if res, out := r.raw(http.MethodGet, p, admin, nil, nil); res.StatusCode != http.StatusBadRequest || ociError(out) != "NAME_INVALID" {
				t.Errorf("GET %s: %d %s, want 400 NAME_INVALID", p, res.StatusCode, out)
			}
		}
	})
}

func mustDigest(t *testing.T, l v1.Layer) v1.Hash {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustLayers(t *testing.T, img v1.Image) []v1.Layer {
	t.Helper()
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	return ls
}
