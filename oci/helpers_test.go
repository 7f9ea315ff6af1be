package oci_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corehq/core/internal/ocitest"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"go.uber.org/zap"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/oci"
	"github.com/corehq/core/server/servertest"
)

func TestMain(m *testing.M) {
	oci.RouteLibraryLogs(zap.NewNop())
	servertest.MainCheckingLogs(m)
}

// registry is a real cored with the image registry, and the host:port
// image references name.
type registry struct {
	t    *testing.T
	env  *servertest.Env
	host string
}

func start(t *testing.T, opts ...servertest.Option) *registry {
	t.Helper()
	cfg := fn.DefaultConfig()
	opts = append([]servertest.Option{servertest.WithImages(oci.DefaultConfig(), nil), servertest.WithFunctionConfig(cfg)}, opts...)
	env := servertest.Start(t, opts...)
	return &registry{t: t, env: env, host: strings.TrimPrefix(env.URL, "http://")}
}

// token issues a publishing token of app through the admin API.
func (r *registry) token(app string) string {
	r.t.Helper()
	status, body := r.env.Admin(http.MethodPost, "/apps/"+app+"/registry/tokens", map[string]any{"name": "test"})
	tok, _ := body["token"].(string)
	if status != http.StatusCreated || tok == "" || body["user"] != oci.User {
		r.t.Fatalf("issuing a token of %s: %d %v", app, status, body)
	}
	return tok
}

// ref names an image of this registry ("hooks/echo:v1", or by digest).
func (r *registry) ref(s string) name.Reference {
	r.t.Helper()
	ref, err := name.ParseReference(r.host+"/"+s, name.Insecure, name.StrictValidation)
	if err != nil {
		r.t.Fatal(err)
	}
	return ref
}

// login is the basic auth of user core with password pw.
func login(pw string) remote.Option {
	return remote.WithAuth(&authn.Basic{Username: oci.User, Password: pw})
}

// push writes img as s with password pw.
func (r *registry) push(s string, img v1.Image, pw string) error {
	r.t.Helper()
	return remote.Write(r.ref(s), img, login(pw))
}

// mustPush is push that must succeed.
func (r *registry) mustPush(s string, img v1.Image, pw string) {
	r.t.Helper()
	if err := r.push(s, img, pw); err != nil {
		r.t.Fatalf("pushing %s: %v", s, err)
	}
}

// raw sends a request to the registry with basic auth pw ("" for none).
func (r *registry) raw(method, path, pw string, headers map[string]string, body []byte) (*http.Response, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.env.URL+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if pw != "" {
		req.SetBasicAuth(oci.User, pw)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := r.env.Client.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return res, out
}

// ociError returns the first error code of an OCI error body.
func ociError(body []byte) string {
	var e struct {
		Errors []struct {
			Code string `json:"code"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Code
}

// ociMessage returns the first error message of an OCI error body.
func ociMessage(body []byte) string {
	var e struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Message
}

// file is a tar entry of a test layer: a regular file unless typ says
// otherwise.
type file struct {
	name, data string
	typ        byte
	link       string
}

// layer makes a gzip-compressed layer of entries, in order.
func layer(t *testing.T, entries ...file) v1.Layer {
	t.Helper()
	files := make([]ocitest.File, len(entries))
	for i, e := range entries {
		files[i] = ocitest.File{Name: e.name, Data: e.data, Type: e.typ, Link: e.link}
	}
	return ocitest.Layer(t, files...)
}

// image makes an OCI image of layers for linux/amd64.
func image(t *testing.T, layers ...v1.Layer) v1.Image { return ocitest.Image(t, layers...) }

// dockerfileImage builds what `docker build` makes of
// testdata/images/<dir>/Dockerfile (ocitest.DockerfileImage).
func dockerfileImage(t *testing.T, dir string) v1.Image {
	return ocitest.DockerfileImage(t, filepath.Join("..", "testdata", "images", dir))
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
