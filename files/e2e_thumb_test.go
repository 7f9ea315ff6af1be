package files_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	_ "image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestThumbnails: a thumbnail of an allowed size is made once and served
// again; a size outside the list, a file that is not an image and a
// decompression bomb (a tiny PNG declaring 100,000 × 100,000 pixels) are
// refused with clear errors, the bomb before its pixels are decoded.
func TestThumbnails(t *testing.T) {
	t.Parallel()
	a := newApp(t, tenant.Settings{})
	_, ada := a.session("ada")
	recs := a.uploaded("/upload/", ada, part{"wide.png", pngOf(t, 300, 120)}, part{"bomb.png", pngBomb(t, 100_000, 100_000)},
		part{"a.txt", []byte("not an image")})
	wide, bomb, txt := recs[0], recs[1], recs[2]
	if bomb["width"] != float64(100_000) {
		t.Errorf("the bomb's declared width: %v", bomb["width"])
	}
	url := func(r map[string]any) string { return r["url"].(map[string]any)["path"].(string) }

	for thumb, want := range map[string]image.Point{"100x100": {100, 100}, "100x100f": {100, 40}, "800x800f": {300, 120}} {
		res, body := a.download(url(wide)+"?thumb="+thumb, ada, nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("thumb=%s: %d %s", thumb, res.StatusCode, body)
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(body))
		if err != nil || (image.Point{cfg.Width, cfg.Height}) != want {
			t.Errorf("thumb=%s is %dx%d (%v), want %v", thumb, cfg.Width, cfg.Height, err, want)
		}
		again, body2 := a.download(url(wide)+"?thumb="+thumb, ada, nil)
		if again.StatusCode != http.StatusOK || !bytes.Equal(body, body2) || again.Header.Get("ETag") != res.Header.Get("ETag") {
			t.Errorf("thumb=%s served again differs", thumb)
		}
	}
	for _, tc := range []struct{ url, says string }{
		{url(wide) + "?thumb=5000x5000", "the sizes are"},
		{url(txt) + "?thumb=100x100", "PNG, JPEG, GIF and WebP"},
		{url(bomb) + "?thumb=100x100", "more pixels"},
	} {
		res, body := a.download(tc.url, ada, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.says) {
			t.Errorf("%s: %d %s; want 400 saying %q", tc.url, res.StatusCode, body, tc.says)
		}
	}
	// Deleting the image removes its thumbnails with it.
	id := wide["core"].(map[string]any)["id"].(string)
	a.gql(ada, `mutation($q: String!) { delete(type: File, arcql: $q) }`, map[string]any{"q": "core.id = '" + id + "'"})
	checkContent(t, a, id+"_100x100", false)
}

// pngBomb is a valid 1×1 PNG whose header declares w×h.
func pngBomb(t *testing.T, w, h uint32) []byte {
	b := pngOf(t, 1, 1)
	// The IHDR chunk: length at 8, type at 12, width and height at 16
	// and 20, its CRC (over type and data) at 29.
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}
