package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/corehq/core/oci"
)

// echoImage builds what `docker build` makes of
// testdata/images/echo/Dockerfile (FROM scratch; COPY function/
// /function/): one layer holding the directory's function/ files, as the
// oci package's tests build it.
func echoImage(t *testing.T) v1.Image {
	t.Helper()
	root := filepath.Join("..", "..", "testdata", "images", "echo")
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(df), "COPY function/ /function/") {
		t.Fatalf("%s/Dockerfile no longer copies function/ to /function/: update this helper", root)
	}
	var names []string
	err = filepath.WalkDir(filepath.Join(root, "function"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1), layer)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "linux", Architecture: "amd64", RootFS: cf.RootFS})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// publishToken issues a publishing token of app through p's admin API.
func (p *coredProcess) publishToken(t *testing.T, admin, app string) string {
	t.Helper()
	status, body := p.call(t, http.MethodPost, "/admin/v1/apps/"+app+"/registry/tokens",
		map[string]string{"authorization": admin}, map[string]any{"name": "backup-test"})
	tok, _ := body["token"].(string)
	if status != http.StatusCreated || tok == "" || body["user"] != oci.User {
		t.Fatalf("issuing a publishing token of %s: %d %v", app, status, body)
	}
	return tok
}

// imageRef names an image of p's registry at /v2/ ("shop/echo:v1").
func (p *coredProcess) imageRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(p.addr+"/"+s, name.Insecure, name.StrictValidation)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// registryLogin is the registry's basic auth with password pw (the
// admin token or a publishing token).
func registryLogin(pw string) remote.Option {
	return remote.WithAuth(&authn.Basic{Username: oci.User, Password: pw})
}

// registryGet sends GET path to p's registry with password pw and
// decodes the JSON answer.
func (p *coredProcess) registryGet(t *testing.T, path, pw string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+p.addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(oci.User, pw)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}
