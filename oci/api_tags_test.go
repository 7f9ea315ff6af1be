package oci_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/server/servertest"
)

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
