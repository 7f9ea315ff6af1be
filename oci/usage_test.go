package oci_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/corehq/core/server/servertest"
)

// contentOf returns the usage figures the images' blobs come to: the
// distinct blobs (manifests, configs, layers) and their bytes.
func contentOf(t *testing.T, imgs ...v1.Image) (blobs int, bytes int64) {
	t.Helper()
	sizes := map[string]int64{}
	for _, img := range imgs {
		raw, err := img.RawManifest()
		if err != nil {
			t.Fatal(err)
		}
		sizes[sha(raw)] = int64(len(raw))
		cfg, err := img.RawConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		sizes[sha(cfg)] = int64(len(cfg))
		for _, l := range mustLayers(t, img) {
			n, err := l.Size()
			if err != nil {
				t.Fatal(err)
			}
			sizes[mustDigest(t, l).String()] = n
		}
	}
	for _, n := range sizes {
		bytes += n
	}
	return len(sizes), bytes
}

func firstCode(body map[string]any) string {
	_, code := servertest.FirstError(body)
	return code
}

// TestAppUsage drives GET /admin/v1/apps/{app}/usage through the real
// server: an unknown app is 404; an app's repositories, manifests, tags,
// and its blobs counted once however many repositories or images share
// them; another app's images are not counted; an unfinished upload is
// counted apart; deleting an image and collecting the garbage lowers the
// figures to what is left.
func TestAppUsage(t *testing.T) {
	t.Parallel()
	r := start(t)
	usage := func(app string) map[string]any {
		t.Helper()
		status, body := r.env.Admin(http.MethodGet, "/apps/"+app+"/usage", nil)
		if status != http.StatusOK || body["app"] != app {
			t.Fatalf("usage of %s: %d %s", app, status, dump(body))
		}
		reg, _ := body["registry"].(map[string]any)
		return reg
	}
	figures := func(repos, manifests, tags, blobs int, bytes int64, uploads int, uploadBytes int64) map[string]any {
		return map[string]any{"repositories": float64(repos), "manifests": float64(manifests), "tags": float64(tags),
			"blobs": float64(blobs), "bytes": float64(bytes), "uploads": float64(uploads), "uploadBytes": float64(uploadBytes)}
	}
	check := func(app, when string, want map[string]any) {
		t.Helper()
		if diff := cmp.Diff(want, usage(app)); diff != "" {
			t.Errorf("usage of %s %s (-want +got):\n%s", app, when, diff)
		}
	}

	// Unknown: no release, no images.
	for _, app := range []string{"nobody", "Upper", "x..y"} {
		status, body := r.env.Admin(http.MethodGet, "/apps/"+app+"/usage", nil)
		if status != http.StatusNotFound || firstCode(body) != "NOT_FOUND" {
			t.Errorf("usage of unknown app %s: %d %s, want 404 NOT_FOUND", app, status, dump(body))
		}
	}
	// A release and no images yet: known, nothing in the registry.
	r.env.PutRelease("used", "v1", `type Note { text: String }`)
	check("used", "before any push", figures(0, 0, 0, 0, 0, 0, 0))

	tok := r.token("used")
	shared := layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb({ok: true}, null);`})
	a := image(t, shared, layer(t, file{name: "function/data.json", data: `{"n": 1}`}))
	b := image(t, shared, layer(t, file{name: "function/data.json", data: `{"n": 2, "more": "bytes"}`}))
	r.mustPush("used/f:v1", a, tok)
	r.mustPush("used/g:v1", a, tok) // the same image in a second repository: its blobs count once
	blobsA, bytesA := contentOf(t, a)
	check("used", "after one image in two repositories", figures(2, 2, 2, blobsA, bytesA, 0, 0))

	r.mustPush("used/f:v2", b, tok) // shares a layer with a
	blobsAB, bytesAB := contentOf(t, a, b)
	if blobsAB != 2*blobsA-1 {
		t.Fatalf("test images: %d blobs for both, want %d (one layer shared)", blobsAB, 2*blobsA-1)
	}
	check("used", "after a second image", figures(2, 3, 3, blobsAB, bytesAB, 0, 0))

	// Another app's images count for it alone; it has no release, but
	// images make it known.
	c := image(t, layer(t, file{name: "function/index.js", data: `exports.main = (i, cb) => cb(2, null);`}))
	r.mustPush("other/f:v1", c, servertest.AdminToken)
	blobsC, bytesC := contentOf(t, c)
	check("other", "after its push", figures(1, 1, 1, blobsC, bytesC, 0, 0))
	check("used", "after another app's push", figures(2, 3, 3, blobsAB, bytesAB, 0, 0))

	// An unfinished upload counts apart from the blobs.
	sent := blobData(1500)
	loc := startUpload(t, r, "used/h", tok)
	if res, out := r.raw(http.MethodPatch, loc, tok, map[string]string{"Content-Type": "application/octet-stream",
		"Content-Range": fmt.Sprintf("0-%d", len(sent)-1)}, sent); res.StatusCode != http.StatusAccepted {
		t.Fatalf("sending a chunk: %d %s", res.StatusCode, out)
	}
	check("used", "with an upload in progress", figures(2, 3, 3, blobsAB, bytesAB, 1, int64(len(sent))))

	// Deleting b unlinks its manifest at once; the garbage collection
	// then removes its own config and layer, and the figures come back
	// to a's.
	db, err := b.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if res, out := r.raw(http.MethodDelete, "/v2/used/f/manifests/"+db.String(), tok, nil, nil); res.StatusCode != http.StatusAccepted {
		t.Fatalf("deleting b: %d %s", res.StatusCode, out)
	}
	rawB, _ := b.RawManifest()
	check("used", "after deleting b", figures(2, 2, 2, blobsAB-1, bytesAB-int64(len(rawB)), 1, int64(len(sent))))
	if status, body := r.env.Admin(http.MethodPost, "/registry/gc", map[string]any{"grace": "0s"}); status != http.StatusOK {
		t.Fatalf("collecting: %d %s", status, dump(body))
	}
	check("used", "after the collection", figures(2, 2, 2, blobsA, bytesA, 1, int64(len(sent))))
	check("other", "after the collection", figures(1, 1, 1, blobsC, bytesC, 0, 0))
}
