package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/corehq/core/internal/ocitest"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/corehq/core/oci"
)

// echoImage builds what `docker build` makes of
// testdata/images/echo/Dockerfile, as the oci package's tests do.
func echoImage(t *testing.T) v1.Image {
	return ocitest.DockerfileImage(t, filepath.Join("..", "..", "testdata", "images", "echo"))
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
