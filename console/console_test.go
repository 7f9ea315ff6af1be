package console_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/console"
	"github.com/corehq/core/server/door"
	"github.com/corehq/core/store/mongo/mongotest"
)

// newEcho mounts the console on an echo that answers errors as the
// server does (errcode's envelope).
func newEcho() (*echo.Echo, *console.Handler) {
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) { _ = door.WriteError(c, err) }
	h := console.New()
	h.Register(e)
	return e, h
}

// TestServesTheEmbeddedFiles: the shell and its modules, with their types,
// the page's security headers and an ETag that a revalidation answers
// with 304; nothing else under /console/.
func TestServesTheEmbeddedFiles(t *testing.T) {
	t.Parallel()
	e, _ := newEcho()
	get := func(path string, hdr map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct {
		path, contentType, contains string
	}{
		{"/console/", "text/html; charset=utf-8", `<script type="module" src="app.js">`},
		{"/console/app.js", "text/javascript; charset=utf-8", "import"},
		{"/console/api.js", "text/javascript; charset=utf-8", "sessionStorage"},
		{"/console/style.css", "text/css; charset=utf-8", "prefers-color-scheme: dark"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			rec := get(tc.path, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d, want 200", rec.Code)
			}
			if got := rec.Header().Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type %q, want %q", got, tc.contentType)
			}
			if !strings.Contains(rec.Body.String(), tc.contains) {
				t.Errorf("body does not contain %q", tc.contains)
			}
			csp := rec.Header().Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'",
				"base-uri 'none'", "object-src 'none'", "worker-src 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
				}
			}
			etag := rec.Header().Get("ETag")
			if again := get(tc.path, map[string]string{"If-None-Match": etag}); etag == "" || again.Code != http.StatusNotModified {
				t.Errorf("revalidation with ETag %q answered %d, want 304", etag, again.Code)
			}
		})
	}
	// hostile checklist 51: no file of the console can be made a service
	// worker's script.
	if rec := get("/console/app.js", map[string]string{"Service-Worker": "script"}); rec.Code != http.StatusForbidden {
		t.Errorf("app.js as a service worker's script: %d, want 403", rec.Code)
	}
	if rec := get("/console", nil); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/console/" {
		t.Errorf("/console: %d to %q, want 301 to /console/", rec.Code, rec.Header().Get("Location"))
	}
	for _, p := range []string{"/console/nope.js", "/console/web/app.js", "/console/index.html/", "/console/..%2fconsole.go", "/console/console.go"} {
		if rec := get(p, nil); rec.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, rec.Code)
		}
	}
}

// TestNoRemoteReferences: the console loads nothing from another origin
// (it must work without network access, and the policy would refuse it).
func TestNoRemoteReferences(t *testing.T) {
	t.Parallel()
	e, h := newEcho()
	for _, name := range h.Names() {
		req := httptest.NewRequest(http.MethodGet, console.Prefix+name, nil)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		for _, bad := range []string{"http://", "https://", "//cdn", "@import url("} {
			if strings.Contains(rec.Body.String(), bad) {
				t.Errorf("%s refers to %q", console.Prefix+name, bad)
			}
		}
	}
}

// TestMain stops the MongoDB-wire test server the browser tests start
// (TestUploadedFilesInABrowser runs on both stores).
func TestMain(m *testing.M) { os.Exit(mongotest.Main(m)) }
