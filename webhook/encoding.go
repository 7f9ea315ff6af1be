package webhook

import (
	"net/http"
	"strings"

	"github.com/corehq/core/errcode"
)

// checkEncoding refuses a body sent with a Content-Encoding (gzip,
// deflate, br, …) with 415 UNSUPPORTED_MEDIA_TYPE, before the webhook is
// looked up and before the body is read. The receiver never decompresses:
// a decompressed body could be far larger than the body limit (a 10 MB
// gzip of 10 GB of zeros), and the compressed bytes are no text a
// function could read or check a signature over. "identity" (no
// encoding) is accepted.
func checkEncoding(r *http.Request) error {
	for _, v := range r.Header.Values("Content-Encoding") {
		for _, enc := range strings.Split(v, ",") {
			if enc = strings.TrimSpace(enc); enc != "" && !strings.EqualFold(enc, "identity") {
				return errcode.New(errcode.UnsupportedMediaType,
					"Content-Encoding %q is not accepted: a webhook body is passed on as sent and never decompressed; send it unencoded", cut(enc))
			}
		}
	}
	return nil
}

// cut shortens a client's value quoted in a message.
func cut(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
