package fn

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPack: a packed set of files reads back as the same files, and the
// same files pack to the same bytes whatever order the map yields.
func TestPack(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"index.js":     []byte(`module.exports = () => require("./lib/a.js");`),
		"lib/a.js":     []byte(`module.exports = 1;`),
		"package.json": []byte(`{"main": "index.js"}`),
		"empty.json":   []byte(`{}`),
	}
	body, err := Pack(files)
	if err != nil {
		t.Fatal(err)
	}
	b, format, err := ParseUpload(body, DefaultPackagesConfig())
	if err != nil {
		t.Fatal(err)
	}
	if format != FormatTarGz {
		t.Errorf("format %q, want tar.gz", format)
	}
	if diff := cmp.Diff(files, b.Files); diff != "" {
		t.Errorf("files read back (-want +got):\n%s", diff)
	}
	for range 5 {
		again, err := Pack(files)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, body) {
			t.Fatal("the same files packed to other bytes")
		}
	}
}
