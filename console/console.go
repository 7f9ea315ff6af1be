package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
)

//go:embed web
var files embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// contentTypes are the types of the files the console is made of; a file
// of another kind is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// policy keeps the page to its own origin: scripts (files only, no
// inline script or handler), styles, images and API calls come from the
// server that served it (images also from blob: URLs the console makes
// of files it fetched with a header), nothing is framed and nothing is sent
// elsewhere. default-src 'none' already covers plugins, workers and
// manifests; they are named to say the console uses none (it never
// starts a worker, a service worker least of all).
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; object-src 'none'; worker-src 'none'; manifest-src 'none'; " +
	"form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// file is one embedded file, read once.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the embedded files.
type Handler struct {
	files map[string]file // by name under web/, "index.html" for the shell
}

// New reads the embedded files.
func New() *Handler {
	h := &Handler{files: map[string]file{}}
	err := fs.WalkDir(files, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h.files[strings.TrimPrefix(p, "web/")] = file{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil { // the files are compiled in: reading them cannot fail
		panic("console: reading the embedded files: " + err.Error())
	}
	return h
}

// Register mounts GET (and HEAD) /console/ and the files below it, and
// redirects /console to /console/.
func (h *Handler) Register(e *echo.Echo) {
	e.GET(strings.TrimSuffix(Prefix, "/"), func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, Prefix)
	})
	e.GET(Prefix+"*", h.serve)
	e.HEAD(Prefix+"*", h.serve)
}

// Names lists the files served, as paths under Prefix ("" is the shell).
func (h *Handler) Names() []string {
	names := make([]string, 0, len(h.files))
	for n := range h.files {
		if n == "index.html" {
			n = ""
		}
		names = append(names, n)
	}
	return names
}

func (h *Handler) serve(c echo.Context) error {
	name := c.Param("*")
	if name == "" {
		name = "index.html"
	}
	f, ok := h.files[name]
	if !ok {
		return errcode.New(errcode.NotFound, "no such path: %s %s", c.Request().Method, c.Request().URL.Path)
	}
	// A browser registering a service worker fetches its script with
	// Service-Worker: script. No file of the console is one, and none may
	// become one: a worker whose scope held /console/ would see the admin
	// token of every request.
	if c.Request().Header.Get("Service-Worker") != "" {
		return errcode.New(errcode.Forbidden, "the console's files are not service worker scripts")
	}
	hd := c.Response().Header()
	hd.Set("Content-Security-Policy", policy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	// Revalidated on every load, so a new binary's console is picked up
	// at once; the ETag makes that a 304.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", f.etag)
	if c.Request().Header.Get("If-None-Match") == f.etag {
		return c.NoContent(http.StatusNotModified)
	}
	if c.Request().Method == http.MethodHead {
		hd.Set(echo.HeaderContentType, f.contentType)
		return c.NoContent(http.StatusOK)
	}
	return c.Blob(http.StatusOK, f.contentType, f.body)
}
