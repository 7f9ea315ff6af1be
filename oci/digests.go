package oci

import (
	"net/http"

	"github.com/opencontainers/go-digest"
)

// Digests other than sha256. distribution keeps every blob under its
// sha256 and links the digest a client pushed it by (sha512, say) to it;
// a client that pushed or asked for sha512:… expects that digest back (OCI
// Distribution: the Docker-Content-Digest of an upload, a mount or a read
// is the digest of the request), so the blob and manifest endpoints answer
// with the digest the request named (api_blobs.go, api_uploads.go,
// pushDigest).

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
