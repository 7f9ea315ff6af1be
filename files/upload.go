package files

import (
	"bufio"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/door"
)

// upload answers POST /upload/{directory…}.
func (h *Handler) upload(c echo.Context) error {
	env, _ := door.EnvFrom(c.Request().Context())
	mr, err := multipartReader(c.Request())
	if err != nil {
		return door.WriteError(c, err)
	}
	out, err := h.engine.Upload(c.Request().Context(), env, c.Param("*"), func(yield func(gql.UploadPart) error) error {
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return errcode.Wrap(errcode.BadRequest, err, "reading the multipart body: %v", err)
			}
			if p.FileName() == "" {
				continue // a form field, not a file
			}
			err = yield(gql.UploadPart{Name: p.FileName(), Content: partReader{p}})
			_ = p.Close()
			if err != nil {
				return err
			}
		}
	})
	if err != nil {
		return door.WriteError(c, err)
	}
	return door.WriteJSON(c, http.StatusCreated, out)
}

// multipartReader reads a multipart/form-data body as it arrives.
func multipartReader(r *http.Request) (*multipart.Reader, error) {
	typ, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || typ != "multipart/form-data" || params["boundary"] == "" {
		return nil, errcode.New(errcode.BadRequest, "an upload's body must be multipart/form-data with a boundary (curl -F 0=@file)")
	}
	// The multipart reader reads through a buffer of 4 KiB: one read of
	// the connection per 4 KiB costs more than the rest of an upload.
	return multipart.NewReader(bufio.NewReaderSize(r.Body, uploadReadBuffer), params["boundary"]), nil
}

// uploadReadBuffer is how much of an upload's body is read from the
// connection at once.
const uploadReadBuffer = 256 << 10

// partReader reads a part, a failure to read it (a body cut short, one
// past the server's read time-out) as the client's.
type partReader struct{ p *multipart.Part }

func (r partReader) Read(b []byte) (int, error) {
	n, err := r.p.Read(b)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, errcode.Wrap(errcode.BadRequest, err, "reading the multipart body: %v", err)
	}
	return n, err
}
