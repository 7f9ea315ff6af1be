package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/api/errcode"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	coreerr "github.com/corehq/core/errcode"
)

// The sizes a manifest PUT declares are checked before the push goes on:
//
//   - its body: one that declares more than maxManifestBytes is refused
//     before any of it is read, 413 (as the OCI Distribution spec asks of
//     a manifest over a registry's limit), rather than waiting for bytes
//     it would not keep; a body without a declared length is read to the
//     bound and refused past it (readManifest);
//   - its descriptors: a config or layer whose declared size is negative,
//     or is not the size of the blob the registry holds under its digest,
//     is refused, 400 SIZE_INVALID. distribution stores such a manifest
//     as sent, and every client pulling it would fail on it (clients
//     check a blob's length against its descriptor).
//
// Blob requests have their own bound, Config.MaxRequestBytes, checked
// in serve before their body is read.

// errCodeTooLarge is a request body over the registry's bound, with the
// code the service's other doors answer for a body over theirs.
var errCodeTooLarge = errcode.Register("core", errcode.ErrorDescriptor{
	Value:          string(coreerr.TooLarge),
	Message:        "request body too large",
	Description:    "The request declares a body longer than the registry accepts for it; nothing of it was read.",
	HTTPStatusCode: http.StatusRequestEntityTooLarge,
})

// checkDeclaredSizes checks a manifest PUT's declared sizes (any other
// request passes).
func (r *Registry) checkDeclaredSizes(req *http.Request, rt route) error {
	if rt.kind != kindManifests || req.Method != http.MethodPut {
		return nil
	}
	if req.ContentLength > maxManifestBytes {
		return errCodeTooLarge.WithMessage(fmt.Sprintf("the manifest declares %d bytes; a manifest may hold at most %d bytes (4 MiB)",
			req.ContentLength, maxManifestBytes))
	}
	body, err := readManifest(req) // the push reads it again, from memory
	if err != nil {
		return err
	}
	var m manifest
	if json.Unmarshal(body, &m) != nil {
		return nil // the push refuses it, saying why
	}
	for _, d := range m.Manifests {
		if d.Size < 0 {
			return errcode.ErrorCodeSizeInvalid.WithMessage(fmt.Sprintf("manifest %s declares a size of %d bytes", d.Digest, d.Size))
		}
	}
	repo, err := r.repository(req.Context(), rt.app, rt.name)
	if err != nil {
		return err
	}
	blobs := repo.Blobs(req.Context())
	if m.Config != nil {
		if err := checkBlobSize(req.Context(), blobs, "config", *m.Config); err != nil {
			return err
		}
	}
	for _, l := range m.Layers {
		if err := checkBlobSize(req.Context(), blobs, "layer", l); err != nil {
			return err
		}
	}
	return nil
}

// checkBlobSize refuses a descriptor whose size is negative or differs
// from its blob's. A blob the registry does not hold is left to the push
// (MANIFEST_BLOB_UNKNOWN, or a layer fetched from its urls).
func checkBlobSize(ctx context.Context, blobs distribution.BlobStatter, what string, d ocispec.Descriptor) error {
	if d.Size < 0 {
		return errcode.ErrorCodeSizeInvalid.WithMessage(fmt.Sprintf("%s %s declares a size of %d bytes", what, d.Digest, d.Size))
	}
	if d.Digest.Validate() != nil {
		return nil // the push refuses it, saying why
	}
	held, err := blobs.Stat(ctx, d.Digest)
	if errors.Is(err, distribution.ErrBlobUnknown) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("oci: reading blob %s: %w", d.Digest, err)
	}
	if held.Size != d.Size {
		return errcode.ErrorCodeSizeInvalid.WithMessage(fmt.Sprintf("%s %s declares %d bytes; the blob holds %d", what, d.Digest, d.Size, held.Size))
	}
	return nil
}
