package oci_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestCollect: garbage collection removes the image a tag no longer
// points at and a blob no manifest references, keeps what the tags reach
// (every image still pulls), and spares young blobs within the grace.
func TestCollect(t *testing.T) {
	t.Parallel()
	r := start(t)
	pw := r.token("gc")
	if st, body := r.env.Admin(http.MethodPatch, "/apps/gc/registry", map[string]any{"allowTagOverwrite": true}); st != http.StatusOK {
		t.Fatalf("allowing overwrites: %d %s", st, dump(body))
	}
	shared := layer(t, file{name: "function/lib.js", data: `exports.x = 1;`})
	old := image(t, shared, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb('old', null);`}))
	cur := image(t, shared, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb('new', null);`}))
	keep := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb('kept', null);`}))
	r.mustPush("gc/f:v1", old, pw)
	r.mustPush("gc/f:v1", cur, pw) // the old image is now untagged
	r.mustPush("gc/g:v1", keep, pw)
	orphan := []byte("a blob no manifest names")
	loc := startUpload(t, r, "gc/f", pw)
	if res, out := r.raw(http.MethodPut, withQuery(loc, "digest="+sha(orphan)), pw, map[string]string{"Content-Type": "application/octet-stream"}, orphan); res.StatusCode != http.StatusCreated {
		t.Fatalf("uploading the orphan: %d %s", res.StatusCode, out)
	}
	oldDigest, _ := old.Digest()
	oldOnly := mustDigest(t, mustLayers(t, old)[1])

	// Within the grace (the default hour), nothing is collected.
	st, rep := r.env.Admin(http.MethodPost, "/registry/gc", nil)
	if st != http.StatusOK || rep["blobsDeleted"] != float64(0) || rep["manifestsDeleted"] != float64(0) {
		t.Fatalf("a collection within the grace: %d %s", st, dump(rep))
	}
	// A dry run says what would go, and removes nothing.
	st, rep = r.env.Admin(http.MethodPost, "/registry/gc", map[string]any{"grace": "0s", "dryRun": true})
	if st != http.StatusOK || rep["dryRun"] != true || rep["manifestsDeleted"] != float64(1) {
		t.Fatalf("a dry run: %d %s", st, dump(rep))
	}
	accept := map[string]string{"Accept": "application/vnd.oci.image.manifest.v1+json"}
	if res, _ := r.raw(http.MethodGet, "/v2/gc/f/manifests/"+oldDigest.String(), pw, accept, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the dry run removed the old manifest: %d", res.StatusCode)
	}

	st, rep = r.env.Admin(http.MethodPost, "/registry/gc", map[string]any{"grace": "0s"})
	// The old manifest and, as blobs: its manifest, its config (which
	// names its layers), its own layer and the orphan; the shared layer
	// stays.
	if st != http.StatusOK || rep["manifestsDeleted"] != float64(1) || rep["blobsDeleted"] != float64(4) {
		t.Fatalf("the collection: %d %s", st, dump(rep))
	}
	for _, p := range []string{"/v2/gc/f/manifests/" + oldDigest.String(), "/v2/gc/f/blobs/" + oldOnly.String(), "/v2/gc/f/blobs/" + sha(orphan),
		"/v2/gc/f/blobs/" + oldDigest.String()} {
		if res, _ := r.raw(http.MethodGet, p, pw, accept, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s after the collection: %d, want 404", p, res.StatusCode)
		}
	}
	for _, ref := range []string{"gc/f:v1", "gc/g:v1"} {
		img, err := remote.Image(r.ref(ref), login(pw))
		if err != nil {
			t.Fatalf("pulling %s after the collection: %v", ref, err)
		}
		for _, l := range mustLayers(t, img) {
			rc, err := l.Compressed() // checks the digest while reading
			if err == nil {
				_, err = io.Copy(io.Discard, rc)
				rc.Close()
			}
			if err != nil {
				t.Fatalf("a layer of %s after the collection: %v", ref, err)
			}
		}
	}
	if st, rep = r.env.Admin(http.MethodPost, "/registry/gc", map[string]any{"grace": "0s"}); st != http.StatusOK || rep["blobsDeleted"] != float64(0) {
		t.Errorf("a second collection: %d %s, want nothing more to remove", st, dump(rep))
	}
	if st, body := r.env.Admin(http.MethodPost, "/registry/gc", map[string]any{"grace": "-1h"}); st != http.StatusBadRequest {
		t.Errorf("a negative grace: %d %s", st, dump(body))
	}
}
