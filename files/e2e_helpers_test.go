package files_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

func TestMain(m *testing.M) { servertest.MainCheckingLogs(m) }

// appSDL is the schema of these tests: records that reference files.
const appSDL = `type Profile { name: String avatar: File attachments: [File!] }`

// app is a test server with one instance of appSDL.
type app struct {
	t      *testing.T
	env    *servertest.Env
	domain string
	token  string // the instance token
	instID string
}

// newApp starts a server and an instance with settings.
func newApp(t *testing.T, settings tenant.Settings, opts ...servertest.Option) *app {
	t.Helper()
	env := servertest.Start(t, opts...)
	env.PutRelease("files", "v1", appSDL)
	token := env.CreateInstance("files.example.com", "files", "v1", settings)
	inst, _ := env.Directory.Lookup("files.example.com")
	return &app{t: t, env: env, domain: "files.example.com", token: token, instID: inst.ID}
}

// farFuture is a sweep's bound that judges every content.
var farFuture = time.Now().Add(24 * time.Hour)

// part is one file of an upload.
type part struct {
	name string
	data []byte
}

// multipartBody encodes parts as curl -F 0=@name does.
func multipartBody(t testing.TB, parts ...part) (body []byte, contentType string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i, p := range parts {
		fw, err := w.CreateFormFile(string(rune('0'+i)), p.name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(p.data)
	}
	w.WriteField("note", "a form field, not a file")
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// upload posts parts to path as token and returns the status and body.
func (a *app) upload(path, token string, parts ...part) (int, []byte) {
	a.t.Helper()
	body, ct := multipartBody(a.t, parts...)
	h := map[string]string{tenant.Header: a.domain, "content-type": ct}
	if token != "" {
		h["authorization"] = token
	}
	res, out := a.env.DoRaw(http.MethodPost, path, h, body)
	return res.StatusCode, out
}

// uploaded uploads parts, which must succeed, and returns the records.
func (a *app) uploaded(path, token string, parts ...part) []map[string]any {
	a.t.Helper()
	status, out := a.upload(path, token, parts...)
	var recs []map[string]any
	if status != http.StatusCreated || json.Unmarshal(out, &recs) != nil || len(recs) != len(parts) {
		a.t.Fatalf("upload to %s answered %d: %s", path, status, out)
	}
	return recs
}

// download gets a file's url as token (in the authorization header) with
// more headers.
func (a *app) download(url, token string, headers map[string]string) (*http.Response, []byte) {
	a.t.Helper()
	h := map[string]string{}
	for k, v := range headers {
		h[k] = v
	}
	if token != "" {
		h["authorization"] = token
	}
	return a.env.DoRaw(http.MethodGet, url, h, nil)
}

// gql runs a GraphQL document as token and returns its data, failing on
// errors.
func (a *app) gql(token, query string, vars map[string]any) map[string]any {
	a.t.Helper()
	status, body := a.env.GraphQL(a.domain, token, query, vars)
	if msg, _ := servertest.FirstError(body); status != http.StatusOK || msg != "" {
		a.t.Fatalf("%s answered %d: %v", query, status, body)
	}
	data, _ := body["data"].(map[string]any)
	return data
}

// session creates an account and logs it in; it returns the account's
// id and session token.
func (a *app) session(username string) (id, token string) {
	a.t.Helper()
	d := a.gql(a.token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
		map[string]any{"v": map[string]any{"username": username, "password": map[string]any{"value": "correct horse battery"}}})
	id = d["createAccount"].(map[string]any)["id"].(string)
	d = a.gql("", `query($u: String!) { login(username: $u, password: "correct horse battery") { sessionToken } }`, map[string]any{"u": username})
	return id, d["login"].(map[string]any)["sessionToken"].(string)
}

// grant gives members (account ids, or "anonymous") every operation on
// one file, as its owner (token).
func (a *app) grant(token, fileID string, members ...string) {
	a.t.Helper()
	var ms []any
	for _, m := range members {
		ms = append(ms, map[string]any{"core": map[string]any{"id": m}})
	}
	a.gql(token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{
		"AccessRight": map[string]any{"resource": fileID, "resourceType": "File", "operationType": "Query", "operation": "*",
			"permissionType": "RBP", "members": ms}}})
}

// pngOf encodes a w×h image.
func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: 200, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// usage is the instance's usage as the admin API answers it.
func (a *app) usage() map[string]any {
	a.t.Helper()
	status, u := a.env.Admin(http.MethodGet, "/instances/"+a.domain+"/usage", nil)
	if status != http.StatusOK {
		a.t.Fatalf("usage answered %d: %v", status, u)
	}
	return u
}

// checkContent fails t unless the store holds a content for the file id
// exactly when want.
func checkContent(t *testing.T, a *app, id string, want bool) {
	t.Helper()
	c, err := a.env.Store.(store.ContentsHolder).Contents().Open(context.Background(), a.instID, id)
	if err == nil {
		c.Close()
	}
	if got := err == nil; got != want {
		t.Errorf("the content of %s is kept: %v, want %v (%v)", id, got, want, err)
	}
}
