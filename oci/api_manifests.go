package oci

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/manifest/manifestlist"
	"github.com/distribution/distribution/v3/manifest/ocischema"
	"github.com/distribution/distribution/v3/manifest/schema2"
	"github.com/distribution/distribution/v3/registry/api/errcode"
	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The manifest endpoints of the OCI Distribution API:
//
//	GET, HEAD /v2/{app}/{name}/manifests/{tag or digest}   the manifest, in a type the Accept header allows
//	PUT       /v2/{app}/{name}/manifests/{tag or digest}   store it (push.go: a tag is a function version)
//	DELETE    /v2/{app}/{name}/manifests/{tag}             remove the tag
//	DELETE    /v2/{app}/{name}/manifests/{digest}          remove the manifest and every tag naming it
//
// distribution's storage checks what a manifest names (its blobs, an
// index's images) and keeps it; these handlers read HTTP and write HTTP.

// tagRegexp is the grammar of a tag (OCI Distribution).
var tagRegexp = regexp.MustCompile(`^` + reference.TagRegexp.String() + `$`)

// manifestRef reads a manifest reference: a digest, or else a tag. A
// reference of the digest grammar that is no digest distribution knows is
// DIGEST_INVALID; what is no tag either names no manifest
// (MANIFEST_UNKNOWN, the 404 clients expect of it).
func manifestRef(ref string) (tag string, d digest.Digest, err error) {
	if d, err := digest.Parse(ref); err == nil {
		return "", d, nil
	} else if digestGrammar.MatchString(ref) {
		return "", "", errcode.ErrorCodeDigestInvalid.WithMessage(fmt.Sprintf("%q is not a digest: %v", ref, err))
	}
	if !tagRegexp.MatchString(ref) {
		return "", "", errcode.ErrorCodeManifestUnknown.WithMessage(fmt.Sprintf(
			"%q is neither a digest nor a tag (1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-')", ref))
	}
	return ref, "", nil
}

// accepted is what an Accept header allows of the manifest types whose
// answer depends on it.
type accepted struct{ docker, dockerList, oci, ociIndex bool }

func acceptedTypes(req *http.Request) accepted {
	var a accepted
	for _, h := range req.Header.Values("Accept") {
		for part := range strings.SplitSeq(h, ",") {
			mt, _, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			switch mt {
			case schema2.MediaTypeManifest:
				a.docker = true
			case manifestlist.MediaTypeManifestList:
				a.dockerList = true
			case ocispec.MediaTypeImageManifest:
				a.oci = true
			case ocispec.MediaTypeImageIndex:
				a.ociIndex = true
			}
		}
	}
	return a
}

// getManifest serves GET and HEAD of a manifest, as distribution does: an
// OCI manifest or index only to a client that accepts it; a Docker
// manifest list asked for by tag by a client that does not accept lists
// answers its linux/amd64 image instead (old clients). If-None-Match on
// the digest answers 304.
func (r *Registry) getManifest(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository) error {
	tag, d, err := manifestRef(rt.ref)
	if err != nil {
		return err
	}
	ctx := req.Context()
	ms, err := repo.Manifests(ctx)
	if err != nil {
		return err
	}
	if tag != "" {
		desc, err := repo.Tags(ctx).Get(ctx, tag)
		var unknown distribution.ErrTagUnknown
		if errors.As(err, &unknown) {
			return errcode.ErrorCodeManifestUnknown.WithDetail(err)
		}
		if err != nil {
			return err
		}
		d = desc.Digest
	}
	if etagMatch(req, d.String()) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	m, err := getManifest(ctx, ms, d, tag)
	if err != nil {
		return err
	}
	accept := acceptedTypes(req)
	list, isList := m.(*manifestlist.DeserializedManifestList)
	switch {
	case isOCIManifest(m) && !accept.oci:
		return errcode.ErrorCodeManifestUnknown.WithMessage("OCI manifest found, but accept header does not support OCI manifests")
	case isList && list.MediaType == ocispec.MediaTypeImageIndex && !accept.ociIndex:
		return errcode.ErrorCodeManifestUnknown.WithMessage("OCI index found, but accept header does not support OCI indexes")
	case isList && list.MediaType == manifestlist.MediaTypeManifestList && tag != "" && !accept.dockerList:
		var image digest.Digest
		for _, desc := range list.Manifests {
			if desc.Platform.Architecture == "amd64" && desc.Platform.OS == "linux" {
				image = desc.Digest
				break
			}
		}
		if image == "" {
			return errcode.ErrorCodeManifestUnknown.WithMessage("the manifest list has no linux/amd64 image, and the Accept header does not allow manifest lists")
		}
		if m, err = getManifest(ctx, ms, image, ""); err != nil {
			return err
		}
		if _, ok := m.(*schema2.DeserializedManifest); ok && !accept.docker {
			return errcode.ErrorCodeManifestInvalid.WithMessage("Schema 2 manifest not supported by client")
		}
		d = image
	}
	ct, payload, err := m.Payload()
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(len(payload)))
	h.Set("Docker-Content-Digest", d.String())
	h.Set("Etag", `"`+d.String()+`"`)
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		_, _ = w.Write(payload)
	}
	return nil
}

func isOCIManifest(m distribution.Manifest) bool {
	_, ok := m.(*ocischema.DeserializedManifest)
	return ok
}

// getManifest reads manifest d: MANIFEST_UNKNOWN when it is not in the
// repository.
func getManifest(ctx context.Context, ms distribution.ManifestService, d digest.Digest, tag string) (distribution.Manifest, error) {
	var opts []distribution.ManifestServiceOption
	if tag != "" {
		opts = append(opts, distribution.WithTag(tag))
	}
	m, err := ms.Get(ctx, d, opts...)
	var unknown distribution.ErrManifestUnknownRevision
	if errors.As(err, &unknown) {
		return nil, errcode.ErrorCodeManifestUnknown.WithDetail(err)
	}
	return m, err
}

// etagMatch reports whether If-None-Match names the manifest, quoted or
// not.
func etagMatch(req *http.Request, etag string) bool {
	for _, v := range req.Header.Values("If-None-Match") {
		if v == etag || v == `"`+etag+`"` {
			return true
		}
	}
	return false
}

// putManifest stores a manifest of mediaType read from body in repo, as
// digest want (when the request named one) and under tag (when it named
// one), and returns its digest. distribution checks that what it names is
// there (MANIFEST_BLOB_UNKNOWN).
func putManifest(ctx context.Context, repo distribution.Repository, tag string, want digest.Digest, mediaType string, body []byte) (digest.Digest, error) {
	ms, err := repo.Manifests(ctx)
	if err != nil {
		return "", err
	}
	m, desc, err := distribution.UnmarshalManifest(mediaType, body)
	if err != nil {
		return "", errcode.ErrorCodeManifestInvalid.WithDetail(err)
	}
	if want != "" && desc.Digest != want {
		return "", errcode.ErrorCodeDigestInvalid.WithMessage(fmt.Sprintf("the manifest's digest is %s, not %s", desc.Digest, want))
	}
	var opts []distribution.ManifestServiceOption
	if tag != "" {
		opts = append(opts, distribution.WithTag(tag))
	}
	if _, err := ms.Put(ctx, m, opts...); err != nil {
		return "", putError(err)
	}
	if tag != "" {
		if err := repo.Tags(ctx).Tag(ctx, tag, desc); err != nil {
			return "", fmt.Errorf("oci: tagging %s as %s: %w", desc.Digest, tag, err)
		}
	}
	return desc.Digest, nil
}

// putError is the OCI error of a manifest distribution refused: each
// verification error becomes its code (the first one's status answers).
// An error that is neither the store's nor the request's context's is
// distribution's verdict on the manifest (a schema version, a layer's
// URL): MANIFEST_INVALID saying it, where distribution answers 500.
func putError(err error) error {
	var ce errcode.Error
	switch {
	case errors.Is(err, distribution.ErrUnsupported):
		return errcode.ErrorCodeUnsupported.WithMessage("storing manifests is not supported")
	case errors.Is(err, distribution.ErrAccessDenied):
		return errcode.ErrorCodeDenied.WithMessage("storing this manifest is denied")
	case errors.As(err, &ce):
		return ce
	}
	var ve distribution.ErrManifestVerification
	if !errors.As(err, &ve) {
		return verdict(err)
	}
	out := make(errcode.Errors, 0, len(ve))
	for _, e := range ve {
		var (
			blob distribution.ErrManifestBlobUnknown
			name distribution.ErrManifestNameInvalid
			unv  distribution.ErrManifestUnverified
		)
		switch {
		case errors.As(e, &blob):
			out = append(out, errcode.ErrorCodeManifestBlobUnknown.WithDetail(blob.Digest))
		case errors.As(e, &name):
			out = append(out, errcode.ErrorCodeNameInvalid.WithDetail(e))
		case errors.As(e, &unv):
			out = append(out, errcode.ErrorCodeManifestUnverified.WithDetail(nil))
		case errors.Is(e, digest.ErrDigestInvalidFormat), errors.Is(e, digest.ErrDigestInvalidLength), errors.Is(e, digest.ErrDigestUnsupported):
			out = append(out, errcode.ErrorCodeDigestInvalid.WithMessage(e.Error()))
		default:
			v := verdict(e)
			if ce, ok := v.(errcode.Error); ok {
				out = append(out, ce)
				continue
			}
			return v // the store failed: the registry's error, not the manifest's
		}
	}
	return out
}

// verdict tells a store's failure (returned as is, a 500) from
// distribution's judgement of a manifest (MANIFEST_INVALID).
func verdict(err error) error {
	var de storagedriver.Error
	if errors.As(err, &de) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return errcode.ErrorCodeManifestInvalid.WithMessage(err.Error())
}

// manifestCreated answers a manifest stored as d: 201 with its URL (by
// the digest the client named).
func manifestCreated(w http.ResponseWriter, rt route, d string) {
	h := w.Header()
	h.Set("Location", "/v2/"+rt.app+"/"+rt.name+"/manifests/"+d)
	h.Set("Docker-Content-Digest", d)
	w.WriteHeader(http.StatusCreated)
}

// removeManifest deletes a tag, or a manifest with every tag naming it.
func removeManifest(ctx context.Context, repo distribution.Repository, ref string) error {
	tag, d, err := manifestRef(ref)
	if err != nil {
		return err
	}
	tags := repo.Tags(ctx)
	if tag != "" {
		err := tags.Untag(ctx, tag)
		var unknown distribution.ErrTagUnknown
		var notFound storagedriver.PathNotFoundError
		switch {
		case errors.Is(err, distribution.ErrUnsupported):
			return errcode.ErrorCodeUnsupported.WithMessage("deleting tags is not supported")
		case errors.As(err, &unknown), errors.As(err, &notFound):
			return errcode.ErrorCodeManifestUnknown.WithMessage(fmt.Sprintf("tag %s is not in %s", tag, repo.Named().Name()))
		}
		return err
	}
	ms, err := repo.Manifests(ctx)
	if err != nil {
		return err
	}
	err = ms.Delete(ctx, d)
	switch {
	case errors.Is(err, digest.ErrDigestUnsupported), errors.Is(err, digest.ErrDigestInvalidFormat):
		return errcode.ErrorCodeDigestInvalid.WithMessage(fmt.Sprintf("%s: %v", d, err))
	case errors.Is(err, distribution.ErrBlobUnknown):
		return errcode.ErrorCodeManifestUnknown.WithMessage(fmt.Sprintf("manifest %s is not in %s", d, repo.Named().Name()))
	case errors.Is(err, distribution.ErrUnsupported):
		return errcode.ErrorCodeUnsupported.WithMessage("deleting manifests is not supported")
	case err != nil:
		return err
	}
	named, err := tags.Lookup(ctx, ocispec.Descriptor{Digest: d})
	if err != nil {
		return fmt.Errorf("oci: finding the tags of %s: %w", d, err)
	}
	for _, t := range named {
		if err := tags.Untag(ctx, t); err != nil {
			return fmt.Errorf("oci: removing tag %s of %s: %w", t, d, err)
		}
	}
	return nil
}
