package oci

import (
	"errors"
	"net/http"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/api/errcode"
)

// The blob endpoints of the OCI Distribution API:
//
//	GET, HEAD /v2/{app}/{name}/blobs/{digest}   the blob, whole or a byte Range
//	DELETE    /v2/{app}/{name}/blobs/{digest}   unlink it from the repository
//
// A blob is read through the repository that links it: another
// repository's blob is BLOB_UNKNOWN there. Deleting removes the link; the
// blob itself goes with the garbage collection once nothing links it.

// getBlob serves GET and HEAD of a blob through distribution's blob
// server (http.ServeContent: Range, If-None-Match on its ETag). A blob
// pushed by another digest than sha256 is kept under its sha256; the
// answer names the digest the request did.
func (r *Registry) getBlob(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository) error {
	d, err := pathDigest(req, rt.ref)
	if err != nil {
		return err
	}
	ctx := req.Context()
	blobs := repo.Blobs(ctx)
	desc, err := blobs.Stat(ctx, d)
	if errors.Is(err, distribution.ErrBlobUnknown) {
		return errcode.ErrorCodeBlobUnknown.WithDetail(d)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Docker-Content-Digest", d.String())
	return blobs.ServeBlob(ctx, w, req, desc.Digest)
}

// deleteBlob removes the repository's link to a blob: 202.
func (r *Registry) deleteBlob(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository) error {
	d, err := pathDigest(req, rt.ref)
	if err != nil {
		return err
	}
	ctx := req.Context()
	err = repo.Blobs(ctx).Delete(ctx, d)
	switch {
	case errors.Is(err, distribution.ErrUnsupported):
		return errcode.ErrorCodeUnsupported.WithMessage("deleting blobs is not supported")
	case errors.Is(err, distribution.ErrBlobUnknown):
		return errcode.ErrorCodeBlobUnknown.WithDetail(d)
	case err != nil:
		return err
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusAccepted)
	return nil
}
