package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/corehq/core/fn"
)

// entry is a tar entry of a test layer: a regular file unless typ says
// otherwise.
type entry struct {
	name, data string
	typ        byte
}

func tarOf(t *testing.T, es ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg}
		if e.typ != 0 {
			hdr.Typeflag, hdr.Size = e.typ, 0
			if e.typ == tar.TypeSymlink {
				hdr.Linkname = "/etc/passwd"
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)[:hdr.Size]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstded(t *testing.T, b []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return zw.EncodeAll(b, nil)
}

// TestExtractLayers applies layers as a container runtime would and
// keeps /function: later layers win, whiteouts and opaque directories
// hide the layers below (not their own layer), everything else is read
// past.
func TestExtractLayers(t *testing.T) {
	t.Parallel()
	base := []entry{
		{name: "etc/os-release", data: "ID=scratch"},
		{name: "function/", typ: tar.TypeDir},
		{name: "function/index.js", data: "v1"},
		{name: "function/lib/a.js", data: "a1"},
		{name: "function/lib/b.js", data: "b1"},
		{name: "function/old.js", data: "old"},
	}
	cases := []struct {
		name   string
		layers [][]entry
		want   map[string]string
		err    string
	}{
		{name: "one layer", layers: [][]entry{base},
			want: map[string]string{"index.js": "v1", "lib/a.js": "a1", "lib/b.js": "b1", "old.js": "old"}},
		{name: "a later layer replaces a file", layers: [][]entry{base, {{name: "./function/index.js", data: "v2"}}},
			want: map[string]string{"index.js": "v2", "lib/a.js": "a1", "lib/b.js": "b1", "old.js": "old"}},
		{name: "a whiteout removes a file", layers: [][]entry{base, {{name: "function/.wh.old.js"}}},
			want: map[string]string{"index.js": "v1", "lib/a.js": "a1", "lib/b.js": "b1"}},
		{name: "a whiteout removes a directory", layers: [][]entry{base, {{name: "/function/.wh.lib"}}},
			want: map[string]string{"index.js": "v1", "old.js": "old"}},
		{name: "an opaque directory hides the layers below, not its own files",
			layers: [][]entry{base, {{name: "function/lib/c.js", data: "c2"}, {name: "function/lib/.wh..wh..opq"}}},
			want:   map[string]string{"index.js": "v1", "lib/c.js": "c2", "old.js": "old"}},
		{name: "the whole function whited out", layers: [][]entry{base, {{name: ".wh.function"}}},
			want: map[string]string{}},
		{name: "a file replaces a directory", layers: [][]entry{base, {{name: "function/lib", data: "now a file"}}},
			want: map[string]string{"index.js": "v1", "lib": "now a file", "old.js": "old"}},
		{name: "files outside /function are not kept", layers: [][]entry{{{name: "app/index.js", data: "x"}, {name: "functions/index.js", data: "y"}}},
			want: map[string]string{}},
		{name: "a link under /function", layers: [][]entry{{{name: "function/index.js", typ: tar.TypeSymlink}}},
			err: "/function/index.js is a link"},
		{name: "/function as a link", layers: [][]entry{base, {{name: "function", typ: tar.TypeSymlink}}},
			err: "/function is a link"},
		{name: "a device under /function", layers: [][]entry{{{name: "function/dev", typ: tar.TypeChar}}},
			err: "not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := newExtractor(fn.DefaultPackagesConfig(), 1<<30)
			var err error
			for i, l := range tc.layers {
				blob := tarOf(t, l...)
				switch i % 3 { // every compression the layer formats use
				case 1:
					blob = gzipped(t, blob)
				case 2:
					blob = zstded(t, blob)
				}
				if err = x.apply(bytes.NewReader(blob)); err != nil {
					break
				}
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range x.function() {
				got[k] = string(v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("function files (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExtractBounds: the files kept and the bytes decompressed are
// bounded, whatever the layers declare.
func TestExtractBounds(t *testing.T) {
	t.Parallel()
	cfg := fn.DefaultPackagesConfig()
	cfg.MaxFiles, cfg.MaxUnpackedBytes = 2, 100
	big := strings.Repeat("x", 101)

	x := newExtractor(cfg, 1<<20)
	err := x.apply(bytes.NewReader(tarOf(t, entry{name: "function/a.js", data: "a"}, entry{name: "function/b.js", data: "b"}, entry{name: "function/c.js", data: "c"})))
	if err == nil || !strings.Contains(err.Error(), "more than 2 files") {
		t.Errorf("too many files: %v", err)
	}
	x = newExtractor(cfg, 1<<20)
	err = x.apply(bytes.NewReader(tarOf(t, entry{name: "function/a.js", data: big})))
	if err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("too many bytes: %v", err)
	}
	// Outside /function, files are read past but counted.
	x = newExtractor(cfg, 4096)
	err = x.apply(bytes.NewReader(gzipped(t, tarOf(t, entry{name: "usr/lib/big", data: strings.Repeat("z", 8192)}))))
	if !errors.Is(err, errImageTooLarge) {
		t.Errorf("a layer unpacking to more than the image bound: %v", err)
	}
	// Several layers share the bound.
	x = newExtractor(cfg, 6000)
	layer := gzipped(t, tarOf(t, entry{name: "usr/lib/big", data: strings.Repeat("z", 2048)}))
	if err := x.apply(bytes.NewReader(layer)); err != nil {
		t.Fatal(err)
	}
	if err := x.apply(bytes.NewReader(layer)); !errors.Is(err, errImageTooLarge) {
		t.Errorf("the second layer over the image bound: %v", err)
	}
	x = newExtractor(cfg, 1<<20)
	if err := x.apply(strings.NewReader("not a tar stream at all, but long enough to have a header......")); err == nil {
		t.Error("a blob that is no tar stream was accepted")
	}
}
