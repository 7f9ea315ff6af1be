package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/api/errcode"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/corehq/core/fn"
	"github.com/corehq/core/internal/names"
)

// maxManifestBytes is the largest manifest accepted (distribution's own
// bound).
const maxManifestBytes = 4 << 20

// pushTag handles PUT /v2/{app}/{name}/manifests/{version}, the push of a
// function version:
//
//  1. the tag must be a valid version, and may replace a different image
//     only when the app allows it (Settings.AllowTagOverwrite);
//  2. the image is read (its layers were pushed before the manifest):
//     with /function/package.json or /function/index.js it is a
//     JavaScript function, whose package must be valid (it is refused as
//     an upload through the admin API would be, with the reason); an
//     artifact (an artifactType, or a config that is not an image's) is
//     stored under its tag as any registry would and is no function;
//     any other image is for a container engine;
//  3. distribution's storage keeps the manifest and the tag;
//  4. the version is published: the package of a JavaScript image
//     replaces the version's package (the next call runs it, in every
//     process within fn.PackagesConfig.Revalidate); a container image
//     removes it, so that calls go to the container engine.
func (r *Registry) pushTag(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository) error {
	ctx := req.Context()
	version := rt.ref
	if !validVersion(version) {
		return errcode.ErrorCodeTagInvalid.WithMessage(fmt.Sprintf(
			"tag %q: tags are function versions, 1 to %d letters, digits, '.', '_' and '-', starting with a letter or digit", version, names.MaxLen))
	}
	body, err := readManifest(req)
	if err != nil {
		return err
	}
	dgst := digest.FromBytes(body)

	r.pushMu.Lock()
	defer r.pushMu.Unlock()
	if err := r.checkOverwrite(ctx, repo, rt, dgst); err != nil {
		return err
	}
	img, err := r.inspect(ctx, repo, body)
	var le *layerError
	switch {
	case errors.Is(err, errMissing):
		// Storing the manifest refuses it, with the code clients expect
		// (MANIFEST_BLOB_UNKNOWN).
		img = nil
	case errors.Is(err, errImageTooLarge):
		return errcode.ErrorCodeManifestInvalid.WithMessage(fmt.Sprintf(
			"the image's layers unpack to more than %d bytes, more than a function image may hold", r.cfg.MaxImageBytes))
	case errors.As(err, &le):
		return errcode.ErrorCodeManifestInvalid.WithMessage(fmt.Sprintf("function %s version %s: %s", rt.name, version, le.reason))
	case err != nil:
		return err
	}

	if _, err := putManifest(ctx, repo, version, "", req.Header.Get("Content-Type"), body); err != nil {
		return err
	}
	if img != nil && img.artifact {
		// The tag no longer names a function image.
		if err := r.dropVersion(ctx, rt.app, rt.name, version); err != nil {
			return fmt.Errorf("%w: %w", errcode.ErrorCodeUnknown.WithMessage(
				"the artifact is stored, but removing the function version its tag named failed: delete the version through the admin API"), err)
		}
	} else if img != nil {
		f := Function{App: rt.app, Name: rt.name, Version: version, Image: rt.app + "/" + rt.name + "@" + dgst.String(),
			Digest: dgst.String(), Runtime: img.runtime, Pushed: time.Now().UTC()}
		if err := r.publish(ctx, &f, img); err != nil {
			return fmt.Errorf("%w: %w", errcode.ErrorCodeUnknown.WithMessage(
				"the image is stored, but publishing its function failed: push it again"), err)
		}
	}
	acknowledgeSubject(w, body)
	manifestCreated(w, rt, dgst.String())
	return nil
}

// checkOverwrite refuses to point an existing tag at another image,
// unless the app allows it.
func (r *Registry) checkOverwrite(ctx context.Context, repo distribution.Repository, rt route, dgst digest.Digest) error {
	cur, err := repo.Tags(ctx).Get(ctx, rt.ref)
	var unknown distribution.ErrTagUnknown
	switch {
	case errors.As(err, &unknown):
		return nil
	case err != nil:
		return fmt.Errorf("oci: reading tag %s of %s/%s: %w", rt.ref, rt.app, rt.name, err)
	case cur.Digest == dgst:
		return nil
	}
	s, err := r.Settings(ctx, rt.app)
	if err != nil {
		return err
	}
	if s.AllowTagOverwrite {
		return nil
	}
	return errcode.ErrorCodeTagInvalid.WithMessage(fmt.Sprintf(
		"%s/%s:%s already exists as another image and app %s does not allow overwriting tags: "+
			"push a new version, or allow it with PATCH /admin/v1/apps/%s/registry {\"allowTagOverwrite\": true}",
		rt.app, rt.name, rt.ref, rt.app, rt.app))
}

// pushed is what an image turned out to be.
type pushed struct {
	// artifact: not a container image (manifest.artifact); stored under
	// its tag, but no function version.
	artifact bool
	runtime  string
	// pkg is the function package of a JavaScript image, as a .tar.gz.
	pkg []byte
}

// errMissing: a manifest or blob the image names is not in the registry.
var errMissing = errors.New("oci: the image names content that is not in the registry")

// manifest is the part of an image manifest or index (OCI or Docker)
// that the inspection needs.
type manifest struct {
	MediaType    string               `json:"mediaType"`
	ArtifactType string               `json:"artifactType"`
	Config       *ocispec.Descriptor  `json:"config"`
	Manifests    []ocispec.Descriptor `json:"manifests"`
	Layers       []ocispec.Descriptor `json:"layers"`
}

// dockerImageConfig is the media type of a Docker image's config.
const dockerImageConfig = "application/vnd.docker.container.image.v1+json"

// artifact reports whether a manifest is an artifact rather than a
// container image: it has an artifactType, or (an image manifest) a
// config that is not an image's (OCI image-spec 1.1: a signature, an
// SBOM, a Helm chart…).
func (m *manifest) artifact() bool {
	if m.ArtifactType != "" {
		return true
	}
	return m.Config != nil && m.Config.MediaType != ocispec.MediaTypeImageConfig && m.Config.MediaType != dockerImageConfig
}

// inspect reads an image for its function. An index is read through one
// of its images: linux/amd64, else another linux one, else the first
// that is not an attestation.
func (r *Registry) inspect(ctx context.Context, repo distribution.Repository, body []byte) (*pushed, error) {
	var m manifest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errcode.ErrorCodeManifestInvalid.WithMessage("the manifest is not JSON: " + err.Error())
	}
	if m.artifact() {
		return &pushed{artifact: true}, nil
	}
	if len(m.Manifests) > 0 {
		child, ok := pickImage(m.Manifests)
		if !ok {
			return &pushed{runtime: RuntimeContainer}, nil
		}
		ms, err := repo.Manifests(ctx)
		if err != nil {
			return nil, err
		}
		cm, err := ms.Get(ctx, child.Digest)
		if err != nil {
			var unknown distribution.ErrManifestUnknownRevision
			if errors.As(err, &unknown) || errors.Is(err, distribution.ErrBlobUnknown) {
				return nil, errMissing
			}
			return nil, fmt.Errorf("oci: reading manifest %s: %w", child.Digest, err)
		}
		_, payload, err := cm.Payload()
		if err != nil {
			return nil, err
		}
		m = manifest{}
		if err := json.Unmarshal(payload, &m); err != nil {
			return nil, errcode.ErrorCodeManifestInvalid.WithMessage("an image of the index is not JSON: " + err.Error())
		}
		if m.artifact() {
			return &pushed{artifact: true}, nil
		}
	}
	x := newExtractor(r.cfg.Packages, r.cfg.MaxImageBytes)
	blobs := repo.Blobs(ctx)
	for _, l := range m.Layers {
		if err := r.applyLayer(ctx, blobs, x, l.Digest); err != nil {
			return nil, err
		}
	}
	files := x.function()
	_, hasPackage := files["package.json"]
	_, hasIndex := files["index.js"]
	if !hasPackage && !hasIndex {
		return &pushed{runtime: RuntimeContainer}, nil
	}
	pkg, err := fn.Pack(files)
	if err != nil {
		return nil, fmt.Errorf("oci: packing the function: %w", err)
	}
	if _, _, err := fn.ParseUpload(pkg, r.cfg.Packages); err != nil {
		reason := err.Error()
		if pe := (*fn.PackageError)(nil); errors.As(err, &pe) {
			reason = pe.Reason
		}
		return nil, badLayer("/%s: %s", functionDir, reason)
	}
	return &pushed{runtime: RuntimeJavaScript, pkg: pkg}, nil
}

// applyLayer streams one layer blob from the store into x.
func (r *Registry) applyLayer(ctx context.Context, blobs distribution.BlobStore, x *extractor, d digest.Digest) error {
	rc, err := blobs.Open(ctx, d)
	if errors.Is(err, distribution.ErrBlobUnknown) {
		return errMissing
	}
	if err != nil {
		return fmt.Errorf("oci: opening layer %s: %w", d, err)
	}
	defer rc.Close()
	return x.apply(rc)
}

// pickImage chooses the image of an index a function is read from.
func pickImage(ds []ocispec.Descriptor) (ocispec.Descriptor, bool) {
	best, score := ocispec.Descriptor{}, 0
	for _, d := range ds {
		s := 1
		if p := d.Platform; p != nil {
			switch {
			case p.OS == "unknown": // buildx attestations
				s = 0
			case p.OS == "linux" && p.Architecture == "amd64":
				s = 3
			case p.OS == "linux":
				s = 2
			}
		}
		if s > score {
			best, score = d, s
		}
	}
	return best, score > 0
}

// publish makes a pushed image the version's function and records it.
func (r *Registry) publish(ctx context.Context, f *Function, img *pushed) error {
	if img.runtime == RuntimeJavaScript {
		info, _, err := r.pk.Publish(ctx, f.App, f.Name, f.Version, img.pkg)
		if err != nil {
			return err
		}
		f.Package = info.SHA256
	} else if _, err := r.pk.Delete(ctx, f.App, f.Name, f.Version); err != nil && !errors.Is(err, fn.ErrNotPublished) {
		// A package of the version (from an earlier JavaScript image or
		// the admin API) would otherwise keep answering its calls.
		return err
	}
	return r.putFunction(ctx, *f)
}

// deleteManifest handles DELETE /v2/{app}/{name}/manifests/{tag or
// digest}: once the tag (or the manifest and every tag naming it) is
// removed, the function versions those tags were pushed as are removed
// too, with the packages published from them.
func (r *Registry) deleteManifest(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository) error {
	ctx := req.Context()
	r.pushMu.Lock()
	defer r.pushMu.Unlock()
	if err := removeManifest(ctx, repo, rt.ref); err != nil {
		return err
	}
	fs, err := r.Functions(ctx, rt.app)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if f.Name != rt.name || (f.Version != rt.ref && f.Digest != rt.ref) {
			continue
		}
		if err := r.dropFunction(ctx, f); err != nil {
			return fmt.Errorf("%w: %w", errcode.ErrorCodeUnknown.WithMessage(
				"the image is deleted, but removing its function failed: delete the version through the admin API"), err)
		}
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
