package oci

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/api/errcode"
	storagedriver "github.com/distribution/distribution/v3/registry/storage/driver"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The referrers API of OCI Distribution 1.1: a manifest whose subject
// field names another manifest refers to it (a signature, an SBOM, an
// attestation); GET /v2/{app}/{name}/referrers/{digest} lists the
// manifests of the repository that refer to that digest, as an image
// index, filtered by ?artifactType= (the answer then carries
// OCI-Filters-Applied: artifactType). A manifest push with a subject
// answers OCI-Subject: <the subject's digest>, so that clients know the
// registry keeps the relation and need no fallback tag.
//
// The relation is not stored apart: the list is read from the manifests
// of the repository each time, so a deleted manifest leaves it at once.
// A function repository holds a few manifests (its versions and what
// refers to them), which keeps that cheap.

// refersTo is the part of a manifest the referrers API reads.
type refersTo struct {
	MediaType    string              `json:"mediaType"`
	ArtifactType string              `json:"artifactType"`
	Config       *ocispec.Descriptor `json:"config"`
	Subject      *ocispec.Descriptor `json:"subject"`
	Annotations  map[string]string   `json:"annotations"`
}

// artifactType is what the referrers list says a manifest is: its
// artifactType, else its config's media type (OCI image-spec 1.1).
func (m *refersTo) artifactType() string {
	if m.ArtifactType != "" {
		return m.ArtifactType
	}
	if m.Config != nil {
		return m.Config.MediaType
	}
	return ""
}

// subjectOf returns the digest a manifest refers to, or "".
func subjectOf(body []byte) string {
	var m refersTo
	if json.Unmarshal(body, &m) != nil || m.Subject == nil {
		return ""
	}
	return m.Subject.Digest.String()
}

// pushDigest handles PUT /v2/{app}/{name}/manifests/{digest}: a manifest
// pushed without a tag (what refers to another manifest usually is),
// stored; a subject is acknowledged with OCI-Subject. A manifest pushed
// by a digest other than sha256 is checked against that digest, stored by
// its sha256 (distribution's canonical digest), and linked under the
// digest it was pushed by, which then reads it back as any digest does
// (distribution's manifest store follows that link).
func (r *Registry) pushDigest(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository) error {
	body, err := readManifest(req)
	if err != nil {
		return err
	}
	want, err := pathDigest(req, rt.ref)
	if err != nil {
		return err
	}
	canonical := want
	if want.Algorithm() != digest.SHA256 {
		if got := want.Algorithm().FromBytes(body); got != want {
			return errcode.ErrorCodeDigestInvalid.WithMessage(fmt.Sprintf("the manifest's %s digest is %s, not %s", want.Algorithm(), got, want))
		}
		canonical = digest.FromBytes(body)
	}
	ctx := req.Context()
	if _, err := putManifest(ctx, repo, "", canonical, req.Header.Get("Content-Type"), body); err != nil {
		return err
	}
	if canonical != want {
		link := "/docker/registry/v2/repositories/" + rt.app + "/" + rt.name + "/_manifests/revisions/" +
			want.Algorithm().String() + "/" + want.Encoded() + "/link"
		if err := r.driver.PutContent(ctx, link, []byte(canonical.String())); err != nil {
			return fmt.Errorf("oci: linking manifest %s as %s: %w", canonical, want, err)
		}
	}
	acknowledgeSubject(w, body)
	manifestCreated(w, rt, want.String())
	return nil
}

// readManifest reads a manifest push's body (at most maxManifestBytes)
// and puts it back, so that it can be read again: checkDeclaredSizes
// reads it before the push does.
func readManifest(req *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxManifestBytes+1))
	if err != nil {
		return nil, errcode.ErrorCodeManifestInvalid.WithMessage("reading the manifest failed: " + err.Error())
	}
	if len(body) > maxManifestBytes {
		return nil, errcode.ErrorCodeManifestInvalid.WithMessage(fmt.Sprintf("the manifest is larger than %d bytes", maxManifestBytes))
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	return body, nil
}

// acknowledgeSubject adds OCI-Subject to a stored manifest's answer.
func acknowledgeSubject(w http.ResponseWriter, body []byte) {
	if s := subjectOf(body); s != "" {
		w.Header().Set("OCI-Subject", s)
	}
}

// referrers answers GET and HEAD of /v2/{app}/{name}/referrers/{digest}.
func (r *Registry) referrers(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository) error {
	subject, err := pathDigest(req, rt.ref)
	if err != nil {
		return err
	}
	ctx := req.Context()
	ms, err := repo.Manifests(ctx)
	if err != nil {
		return err
	}
	enum, ok := ms.(distribution.ManifestEnumerator)
	if !ok {
		return errors.New("oci: the manifest store cannot list its manifests")
	}
	list := []ocispec.Descriptor{}
	err = enum.Enumerate(ctx, func(d digest.Digest) error {
		m, err := ms.Get(ctx, d)
		if err != nil {
			var unknown distribution.ErrManifestUnknownRevision
			if errors.As(err, &unknown) || errors.Is(err, distribution.ErrBlobUnknown) {
				return nil // deleted meanwhile
			}
			return err
		}
		mediaType, payload, err := m.Payload()
		if err != nil {
			return err
		}
		var rf refersTo
		if json.Unmarshal(payload, &rf) != nil || rf.Subject == nil || rf.Subject.Digest != subject {
			return nil
		}
		if rf.MediaType != "" {
			mediaType = rf.MediaType
		}
		list = append(list, ocispec.Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(payload)),
			ArtifactType: rf.artifactType(), Annotations: rf.Annotations})
		return nil
	})
	var notFound storagedriver.PathNotFoundError
	if err != nil && !errors.As(err, &notFound) {
		return fmt.Errorf("oci: listing the referrers of %s in %s/%s: %w", subject, rt.app, rt.name, err)
	}
	if at := req.URL.Query().Get("artifactType"); at != "" {
		list = slices.DeleteFunc(list, func(d ocispec.Descriptor) bool { return d.ArtifactType != at })
		w.Header().Set("OCI-Filters-Applied", "artifactType")
	}
	slices.SortFunc(list, func(a, b ocispec.Descriptor) int { return strings.Compare(a.Digest.String(), b.Digest.String()) })
	body, err := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex, Manifests: list})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", ocispec.MediaTypeImageIndex)
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
	return nil
}
