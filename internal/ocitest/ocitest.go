// Package ocitest builds the OCI images that tests push to the service's
// registry: layers of given entries, images of them, and what `docker
// build` makes of a test function's Dockerfile, without a Docker engine.
package ocitest

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is an entry of a layer: a regular file of Data unless Type says
// otherwise (a directory, or a link to Link).
type File struct {
	Name, Data string
	Type       byte
	Link       string
}

// Layer makes a gzip-compressed layer of entries, in order.
func Layer(tb testing.TB, entries ...File) v1.Layer {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Name, Mode: 0o644, Size: int64(len(e.Data)), Typeflag: tar.TypeReg}
		if e.Type != 0 {
			hdr.Typeflag, hdr.Size, hdr.Linkname = e.Type, 0, e.Link
		}
		if hdr.Typeflag == tar.TypeDir {
			hdr.Mode = 0o755
		}
		if err := tw.WriteHeader(hdr); err != nil {
			tb.Fatal(err)
		}
		if hdr.Size > 0 {
			if _, err := io.WriteString(tw, e.Data); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	raw := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// Image makes an OCI image of layers for linux/amd64.
func Image(tb testing.TB, layers ...v1.Layer) v1.Image {
	tb.Helper()
	img, err := mutate.AppendLayers(mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1), layers...)
	if err != nil {
		tb.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		tb.Fatal(err)
	}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "linux", Architecture: "amd64", RootFS: cf.RootFS})
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

// DockerfileImage builds what `docker build` makes of root/Dockerfile
// (FROM scratch; COPY function/ /function/), a test function's folder
// under testdata/images: one layer holding its function/ files.
func DockerfileImage(tb testing.TB, root string) v1.Image {
	tb.Helper()
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		tb.Fatal(err)
	}
	if !strings.Contains(string(df), "COPY function/ /function/") {
		tb.Fatalf("%s/Dockerfile no longer copies function/ to /function/: update this helper", root)
	}
	var entries []File
	err = filepath.WalkDir(filepath.Join(root, "function"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		entries = append(entries, File{Name: filepath.ToSlash(rel), Data: string(b)})
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	slices.SortFunc(entries, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return Image(tb, Layer(tb, entries...))
}
