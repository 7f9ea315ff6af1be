package oci

import (
	"net/http"
	"strings"

	"github.com/opencontainers/go-digest"
)

// Digests other than sha256. distribution keeps every blob under its
// sha256 and links the digest a client pushed it by (sha512, say) to it;
// its answers then name the sha256. A client that pushed or asked for
// sha512:… expects that digest back (OCI Distribution: the
// Docker-Content-Digest of an upload, a mount or a read is the digest of
// the request), so blobWriter puts it back on successful answers.

// requestedDigest is the digest a blob request names: the digest of an
// upload's completion (?digest=), of a mount (?mount=), or of a read; ""
// when there is none or it is not a digest.
func requestedDigest(req *http.Request, rt route) string {
	var d string
	q := req.URL.Query()
	switch req.Method {
	case http.MethodPut:
		d = q.Get("digest")
	case http.MethodPost:
		d = q.Get("mount")
	case http.MethodGet, http.MethodHead:
		if !strings.HasPrefix(rt.ref, "uploads") {
			d = rt.ref
		}
	}
	if _, err := digest.Parse(d); err != nil {
		return ""
	}
	return d
}

// blobWriter rewrites a successful answer's Docker-Content-Digest, and
// the blob's Location, to the digest the request named.
type blobWriter struct {
	http.ResponseWriter
	digest string
	done   bool
}

func (w *blobWriter) WriteHeader(status int) {
	if !w.done {
		w.done = true
		h := w.Header()
		if got := h.Get("Docker-Content-Digest"); status >= 200 && status < 300 && got != "" && got != w.digest {
			h.Set("Docker-Content-Digest", w.digest)
			if loc := h.Get("Location"); strings.HasSuffix(loc, "/blobs/"+got) {
				h.Set("Location", strings.TrimSuffix(loc, got)+w.digest)
			}
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *blobWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *blobWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// declineForeignMount turns a cross-repository mount by a digest other
// than sha256 into an ordinary upload (the OCI specification lets a
// registry decline a mount): distribution would link only the sha256 in
// the target repository, and the blob would not be found there by the
// digest the client knows.
func declineForeignMount(req *http.Request) {
	q := req.URL.Query()
	d, err := digest.Parse(q.Get("mount"))
	if err != nil || d.Algorithm() == digest.SHA256 {
		return
	}
	q.Del("mount")
	q.Del("from")
	req.URL.RawQuery = q.Encode()
}
