package files

import (
	"io"
	"mime"
	"net/http"
	"os"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/media"
	"github.com/corehq/core/server/door"
	"github.com/corehq/core/tenant"
	"github.com/corehq/core/untrusted"
)

// download answers GET /file/{instanceId}-{fileId}.{extension}.
func (h *Handler) download(c echo.Context) error {
	req := c.Request()
	if err := untrusted.CheckRequest(req); err != nil {
		return err
	}
	instID, fileID, ext, ok := parseName(c.Param("name"))
	if !ok {
		return door.WriteError(c, errcode.New(errcode.NotFound, "no such file"))
	}
	inst, ok := h.engine.Instances().LookupID(instID)
	if !ok {
		return door.WriteError(c, errcode.New(errcode.NotFound, "no such file"))
	}
	ctx := tenant.WithInstance(req.Context(), inst) // for the request's log line
	c.SetRequest(req.WithContext(ctx))
	if origin := req.Header.Get("Origin"); origin != "" {
		c.Response().Header().Add("Vary", "Origin")
		if inst.Settings.CORS.Allows(origin) {
			c.Response().Header().Set("Access-Control-Allow-Origin", origin)
		}
	}
	authorization := req.Header.Get("authorization")
	if authorization == "" {
		authorization = req.URL.Query().Get("token")
	}
	env, err := h.engine.Open(ctx, inst, authorization, c.RealIP())
	if err != nil {
		return door.WriteError(c, err)
	}
	f, content, err := h.engine.OpenFile(ctx, env, fileID, ext, req.URL.Query().Get("thumb"))
	if err != nil {
		return door.WriteError(c, err)
	}
	defer content.Close()
	hdr := c.Response().Header()
	untrusted.Sandbox(hdr)
	hdr.Set("Content-Type", f.Type)
	hdr.Set("ETag", `"`+f.SHA256+`"`)
	hdr.Set("Cache-Control", "private, no-cache")
	disposition := "attachment"
	if media.Inline(f.Type) {
		disposition = "inline"
	}
	hdr.Set("Content-Disposition", mimeDisposition(disposition, f.Name))
	var body io.ReadSeeker = content
	if local, ok := content.(localContent); ok {
		body = local.OSFile()
	}
	http.ServeContent(sendfileResponse{c.Response()}, req, "", f.Updated, body)
	return nil
}

// localContent is a content kept in a file of this machine's disk (the
// embedded store's).
type localContent interface{ OSFile() *os.File }

// sendfileResponse gives echo's Response the ReadFrom of the connection
// under it, so that http.ServeContent hands a file to the connection
// whole (sendfile on Linux) instead of copying it through a 32 KiB
// buffer (docs/benchmarks.md: a 200 MiB download takes about what cp of
// the file takes).
type sendfileResponse struct{ *echo.Response }

func (w sendfileResponse) ReadFrom(r io.Reader) (int64, error) {
	if !w.Committed {
		w.WriteHeader(http.StatusOK)
	}
	n, err := io.Copy(w.Response.Writer, r)
	w.Size += n
	return n, err
}

// parseName splits {instanceId}-{fileId}.{extension}: the file id is a
// record id (store ids are 26 characters), the instance id what is before
// it.
func parseName(name string) (inst, id, ext string, ok bool) {
	base, ext, ok := strings.Cut(name, ".")
	const idLen = 26
	if !ok || len(base) < idLen+2 || base[len(base)-idLen-1] != '-' {
		return "", "", "", false
	}
	return base[:len(base)-idLen-1], base[len(base)-idLen:], ext, true
}

// mimeDisposition is a Content-Disposition naming the file (RFC 2231
// encoding for names beyond ASCII).
func mimeDisposition(kind, name string) string {
	if v := mime.FormatMediaType(kind, map[string]string{"filename": name}); v != "" {
		return v
	}
	return kind
}
