package files_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/tenant"
)

// TestUploadRefusals: the size and quota limits, bad requests and
// callers without a token are refused with clear errors, and nothing of
// a refused upload is kept (not its record, not its bytes, not its
// count), even the parts before the one refused.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t, tenant.Settings{AnonymousRequests: true, MaxFileSize: 1000, Quota: tenant.Quota{StorageBytes: 20_000}})
	_, ada := a.session("ada")
	small := part{"small.txt", bytes.Repeat([]byte("s"), 400)}
	body, ct := multipartBody(t, small)
	for _, tc := range []struct {
		name   string
		path   string
		header map[string]string
		body   any
		parts  []part
		status int
		code   string
		says   string
	}{
		{name: "past maxFileSize", path: "/upload/", parts: []part{small, {"big.bin", make([]byte, 1001)}}, status: http.StatusRequestEntityTooLarge, code: "TOO_LARGE", says: "maxFileSize of 1000"},
		{name: "past the storageBytes quota", path: "/upload/", parts: slicesOf(small, 60), status: http.StatusForbidden, code: "QUOTA_EXCEEDED", says: "storageBytes"},
		{name: "no token", path: "/upload/", header: map[string]string{"content-type": ct}, body: body, status: http.StatusUnauthorized, code: "UNAUTHENTICATED", says: "token"},
		{name: "not multipart", path: "/upload/", header: map[string]string{"authorization": ada, "content-type": "application/json"}, body: `{"a":1}`, status: http.StatusBadRequest, code: "BAD_REQUEST", says: "multipart/form-data"},
		{name: "no file", path: "/upload/", parts: []part{}, status: http.StatusBadRequest, code: "BAD_REQUEST", says: "no file"},
		{name: "a directory climbing out", path: "/upload/a/../../etc", parts: []part{small}, status: http.StatusBadRequest, code: "BAD_REQUEST", says: "directory"},
		{name: "a cut body", path: "/upload/", header: map[string]string{"authorization": ada, "content-type": ct}, body: body[:len(body)/2], status: http.StatusBadRequest, code: "BAD_REQUEST", says: "multipart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res *http.Response
			var out []byte
			if tc.parts != nil {
				b, ct := multipartBody(t, tc.parts...)
				h := map[string]string{tenant.Header: a.domain, "authorization": ada, "content-type": ct}
				res, out = a.env.DoRaw(http.MethodPost, tc.path, h, b)
			} else {
				h := map[string]string{tenant.Header: a.domain}
				for k, v := range tc.header {
					h[k] = v
				}
				res, out = a.env.DoRaw(http.MethodPost, tc.path, h, tc.body)
			}
			var env struct {
				Errors []struct {
					Message    string
					Extensions struct{ Code string }
				}
			}
			_ = json.Unmarshal(out, &env)
			if res.StatusCode != tc.status || len(env.Errors) == 0 || env.Errors[0].Extensions.Code != tc.code || !strings.Contains(env.Errors[0].Message, tc.says) {
				t.Errorf("%d %s; want %d %s saying %q", res.StatusCode, out, tc.status, tc.code, tc.says)
			}
		})
	}
	// Nothing of any refused upload is kept.
	if n := len(a.gql(a.token, `query { find(type: File, arcql: "*") { edges { node { ... on File { name } } } } }`, nil)["find"].(map[string]any)["edges"].([]any)); n != 0 {
		t.Errorf("%d File records were kept", n)
	}
	if u := a.usage(); u["files"] != float64(0) || u["fileBytes"] != float64(0) {
		t.Errorf("usage counts files of refused uploads: %v", u)
	}
	if n, err := a.env.Engine.SweepFiles(t.Context(), farFuture); err != nil || n != 0 {
		t.Errorf("the sweep found %d contents of refused uploads (%v): a failed upload must remove its own", n, err)
	}
	// Within the limits, the same instance takes files.
	a.uploaded("/upload/", ada, small)
}

// TestUploadedPagesRunNoScript: HTML and SVG uploads are served as
// attachments inside the sandbox policy, never as the service's own
// pages; the browser test (console/e2e) opens them.
func TestUploadedPagesRunNoScript(t *testing.T) {
	t.Parallel()
	a := newApp(t, tenant.Settings{})
	_, ada := a.session("ada")
	html := []byte(`<!DOCTYPE html><html><script>fetch('/admin/v1/instances',{headers:{authorization:sessionStorage.getItem('t')}})</script></html>`)
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.domain)"><script>alert(1)</script></svg>`)
	recs := a.uploaded("/upload/", ada, part{"page.png", html}, part{"image.svg", svg})
	// HTML is an attachment; SVG is not recognised as an image (sniffing
	// never says image/svg+xml), so it is plain text, shown as text.
	for i, want := range []struct{ typ, ext, disposition string }{
		{"text/html; charset=utf-8", "html", "attachment"}, {"text/plain; charset=utf-8", "txt", "inline"}} {
		r := recs[i]
		if r["type"] != want.typ || r["extension"] != want.ext {
			t.Errorf("%s recorded as %v .%v; want %s .%s (sniffed, not the client's name)", r["name"], r["type"], r["extension"], want.typ, want.ext)
		}
		res, _ := a.download(r["url"].(map[string]any)["path"].(string), ada, nil)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Disposition"), want.disposition) || res.Header.Get("Content-Type") != want.typ ||
			!strings.HasPrefix(res.Header.Get("Content-Security-Policy"), "sandbox;") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s served with %d %v", r["name"], res.StatusCode, res.Header)
		}
	}
}

func slicesOf(p part, n int) []part {
	out := make([]part, n)
	for i := range out {
		out[i] = p
	}
	return out
}
