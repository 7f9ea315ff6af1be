package errcode

import (
	"errors"
	"io"
	"net/http"
)

// ReadBody reads the whole body of a request: the one body reader of
// every door. The server caps bodies at its limit (http.MaxBytesReader);
// limit > 0 caps the body here too, for a handler with a bound of its own.
// A body over either limit is BodyTooLarge, and nothing of it is used;
// any other read failure is BAD_REQUEST.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if limit > 0 && r.ContentLength > limit {
		return nil, BodyTooLarge(limit)
	}
	body := io.Reader(r.Body)
	if limit > 0 {
		body = io.LimitReader(r.Body, limit+1)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, BodyTooLarge(mbe.Limit)
		}
		return nil, Wrap(BadRequest, err, "reading the request body failed")
	}
	if limit > 0 && int64(len(b)) > limit {
		return nil, BodyTooLarge(limit)
	}
	return b, nil
}

// BodyTooLarge is the one answer to a request body over a limit of limit
// bytes: TOO_LARGE (413).
func BodyTooLarge(limit int64) *Error {
	return New(TooLarge, "request body is larger than the limit of %d bytes", limit)
}
