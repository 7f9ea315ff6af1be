package oci

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/api/errcode"
	"github.com/distribution/distribution/v3/registry/storage"
	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The upload endpoints of the OCI Distribution API, how a blob is pushed:
//
//	POST   /v2/{app}/{name}/blobs/uploads/                  start an upload: 202 and its Location
//	POST   …/uploads/?mount={digest}&from={repository}      link a blob of another repository: 201
//	                                                        (or, declined, an upload as above)
//	PATCH  /v2/{app}/{name}/blobs/uploads/{id}?_state=…     a chunk (Content-Range start-end): 202
//	PUT    …/uploads/{id}?_state=…&digest={digest}          the last chunk, if any, and the digest: 201
//	GET, HEAD …/uploads/{id}                                how far it is (Range): 204
//	DELETE …/uploads/{id}?_state=…                          abandon it: 204
//
// A blob sent whole is a POST then a PUT with the body (the single POST
// with ?digest= is optional in the specification: it is answered as a
// POST, 202, and the client PUTs). The Location of every answer carries
// the upload's state (uploadState), signed with the registry's upload
// secret, which every process on the store shares: the next request of
// the upload may reach another process. The data goes to distribution's
// blob writer, which hashes it as it arrives and keeps the hash state
// with the data, so that the PUT checks the digest without reading the
// blob again.

// uploadState is what an upload's Location carries between requests
// (?_state=): the repository, the upload, how far it is, and when it
// started. Its encoding is distribution's (the same fields, JSON, an
// HMAC-SHA256 before it, URL-safe base64), so that uploads in progress go
// on across an upgrade from a version that served distribution's
// handlers.
type uploadState struct {
	Name      string
	UUID      string
	Offset    int64
	StartedAt time.Time
}

// pack signs s with the upload secret.
func (r *Registry) pack(s uploadState) (string, error) {
	p, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("oci: encoding an upload's state: %w", err)
	}
	mac := hmac.New(sha256.New, []byte(r.uploadSecret))
	mac.Write(p)
	return base64.URLEncoding.EncodeToString(append(mac.Sum(nil), p...)), nil
}

// errUploadState: a state that is not one the registry signed.
var errUploadState = errors.New("oci: the upload state was not signed by this registry")

// unpack reads a state the registry signed.
func (r *Registry) unpack(token string) (uploadState, error) {
	var s uploadState
	raw, err := base64.URLEncoding.DecodeString(token)
	if err != nil {
		return s, errUploadState
	}
	mac := hmac.New(sha256.New, []byte(r.uploadSecret))
	if len(raw) < mac.Size() {
		return s, errUploadState
	}
	sum, p := raw[:mac.Size()], raw[mac.Size():]
	mac.Write(p)
	if !hmac.Equal(mac.Sum(nil), sum) {
		return s, errUploadState
	}
	if err := json.Unmarshal(p, &s); err != nil {
		return s, errUploadState
	}
	return s, nil
}

// uploadURL is the Location of an upload, and blobURL of a blob, relative
// to the host (so that proxies in front need no configuration).
func uploadURL(rt route, id, state string) string {
	return "/v2/" + rt.app + "/" + rt.name + "/blobs/uploads/" + id + "?" + url.Values{"_state": {state}}.Encode()
}

func blobURL(rt route, d digest.Digest) string {
	return "/v2/" + rt.app + "/" + rt.name + "/blobs/" + d.String()
}

// startUpload serves POST …/blobs/uploads/: a mount when it names one
// the registry accepts (auth.go and digests.go decline the others, which
// then start an upload), else a new upload.
func (r *Registry) startUpload(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository) error {
	ctx := req.Context()
	var opts []distribution.BlobCreateOption
	q := req.URL.Query()
	if opt, ok := mountFrom(q.Get("from"), q.Get("mount")); ok {
		opts = append(opts, opt)
	}
	up, err := repo.Blobs(ctx).Create(ctx, opts...)
	var mounted distribution.ErrBlobMounted
	switch {
	case errors.As(err, &mounted):
		return blobCreated(w, rt, mounted.Descriptor.Digest)
	case errors.Is(err, distribution.ErrUnsupported):
		return errcode.ErrorCodeUnsupported.WithMessage("uploads are not supported")
	case err != nil:
		return err
	}
	if err := r.progress(w, rt, up); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// mountFrom is the option that links blob mount of repository from, when
// both are given and valid; a mount that cannot be read is no mount (the
// request starts an upload, as the specification lets a registry answer).
func mountFrom(from, mount string) (distribution.BlobCreateOption, bool) {
	if from == "" || mount == "" {
		return nil, false
	}
	d, err := digest.Parse(mount)
	if err != nil {
		return nil, false
	}
	named, err := reference.WithName(from)
	if err != nil {
		return nil, false
	}
	canonical, err := reference.WithDigest(named, d)
	if err != nil {
		return nil, false
	}
	return storage.WithMountFrom(canonical), true
}

// progress writes the headers of an upload in progress: its Location with
// its new state, its id, and the Range it holds. It makes what the upload
// received durable first (the blob writer's Close keeps the data and the
// hash state), so that the next request, on any process, continues from
// there.
func (r *Registry) progress(w http.ResponseWriter, rt route, up distribution.BlobWriter) error {
	if err := up.Close(); err != nil {
		return fmt.Errorf("oci: keeping upload %s: %w", up.ID(), err)
	}
	state, err := r.pack(uploadState{Name: rt.app + "/" + rt.name, UUID: up.ID(), Offset: up.Size(), StartedAt: up.StartedAt()})
	if err != nil {
		return err
	}
	end := max(up.Size()-1, 0)
	h := w.Header()
	h.Set("Docker-Upload-UUID", up.ID())
	h.Set("Location", uploadURL(rt, up.ID(), state))
	h.Set("Content-Length", "0")
	h.Set("Range", fmt.Sprintf("0-%d", end))
	return nil
}

// blobCreated answers a blob stored (or mounted) as d: 201 with its URL.
func blobCreated(w http.ResponseWriter, rt route, d digest.Digest) error {
	h := w.Header()
	h.Set("Location", blobURL(rt, d))
	h.Set("Content-Length", "0")
	h.Set("Docker-Content-Digest", d.String())
	w.WriteHeader(http.StatusCreated)
	return nil
}

// uploadStatus serves GET and HEAD …/uploads/{id}: 204 with how far the
// upload is (no state needed: it changes nothing).
func (r *Registry) uploadStatus(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository, id string) error {
	ctx := req.Context()
	up, err := resume(ctx, repo, id)
	if err != nil {
		return err
	}
	if err := r.progress(w, rt, up); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// resume opens upload id of repo: BLOB_UPLOAD_UNKNOWN when there is none
// (finished, abandoned, swept, or never started).
func resume(ctx context.Context, repo distribution.Repository, id string) (distribution.BlobWriter, error) {
	up, err := repo.Blobs(ctx).Resume(ctx, id)
	if errors.Is(err, distribution.ErrBlobUploadUnknown) {
		return nil, errcode.ErrorCodeBlobUploadUnknown.WithMessage(fmt.Sprintf("upload %s is not in progress (finished, cancelled, or swept after an hour without data): start the blob again", id))
	}
	return up, err
}

// continueUpload serves PATCH, PUT and DELETE of …/uploads/{id}: the
// request's state must be one the registry signed for this repository
// and upload, and the upload must be where the state says (else another
// request moved it meanwhile: 416).
func (r *Registry) continueUpload(w http.ResponseWriter, req *http.Request, rt route, repo distribution.Repository, id string) error {
	ctx := req.Context()
	state, err := r.unpack(req.URL.Query().Get("_state"))
	if err != nil || state.Name != rt.app+"/"+rt.name || state.UUID != id {
		return errcode.ErrorCodeBlobUploadInvalid.WithMessage(
			"the upload's state is missing or not this upload's: continue an upload at the Location of its last answer")
	}
	up, err := resume(ctx, repo, id)
	if err != nil {
		return err
	}
	if up.Size() != state.Offset {
		return errcode.ErrorCodeRangeInvalid.WithMessage(fmt.Sprintf(
			"the upload holds %d bytes, not the %d of this Location: ask where it is (GET) and continue from there", up.Size(), state.Offset))
	}
	switch req.Method {
	case http.MethodPatch:
		return r.patchUpload(w, req, rt, up)
	case http.MethodPut:
		return r.finishUpload(w, req, rt, up)
	}
	return cancelUpload(w, req, up)
}

// patchUpload appends a chunk: 202 with the upload's new state.
func (r *Registry) patchUpload(w http.ResponseWriter, req *http.Request, rt route, up distribution.BlobWriter) error {
	if ct := req.Header.Get("Content-Type"); ct != "" && ct != "application/octet-stream" {
		return badRequest(errcode.ErrorCodeBlobUploadInvalid, fmt.Sprintf("a chunk is sent as application/octet-stream, not %q", ct))
	}
	if err := checkRange(req, up.Size()); err != nil {
		return err
	}
	if err := r.receive(req, up); err != nil {
		return err
	}
	if err := r.progress(w, rt, up); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// finishUpload appends the request's body, if any, and stores the blob
// under the digest the request names, once the data has it: 201.
// Another digest than the data's is DIGEST_INVALID, and the upload is
// gone.
func (r *Registry) finishUpload(w http.ResponseWriter, req *http.Request, rt route, up distribution.BlobWriter) error {
	ctx := req.Context()
	if err := checkRange(req, up.Size()); err != nil {
		return err
	}
	raw := req.URL.Query().Get("digest")
	if raw == "" {
		return errcode.ErrorCodeDigestInvalid.WithMessage("the PUT that ends an upload names the blob's digest: ?digest=<algorithm>:<hex>")
	}
	d, err := digest.Parse(raw)
	if err != nil {
		return errcode.ErrorCodeDigestInvalid.WithMessage(fmt.Sprintf("%q is not a digest: %v", raw, err))
	}
	if err := r.receive(req, up); err != nil {
		return err
	}
	if _, err := up.Commit(ctx, ocispec.Descriptor{Digest: d}); err != nil {
		// What a failed cancel leaves behind is swept with the aborted
		// uploads (uploads.go).
		_ = up.Cancel(ctx)
		return commitError(err)
	}
	// The digest the client named, a sha512 one included (distribution
	// keeps the blob under its sha256 and links the other to it).
	return blobCreated(w, rt, d)
}

// commitError is the OCI error of a failed commit.
func commitError(err error) error {
	var bad distribution.ErrBlobInvalidDigest
	var ce errcode.Error
	switch {
	case errors.As(err, &bad):
		return errcode.ErrorCodeDigestInvalid.WithDetail(bad)
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, distribution.ErrAccessDenied):
		return errcode.ErrorCodeDenied.WithMessage("storing this blob is denied")
	case errors.Is(err, distribution.ErrUnsupported):
		return errcode.ErrorCodeUnsupported.WithMessage("storing blobs is not supported")
	case errors.Is(err, distribution.ErrBlobInvalidLength), errors.Is(err, distribution.ErrBlobDigestUnsupported):
		return badRequest(errcode.ErrorCodeBlobUploadInvalid, err.Error())
	}
	return err
}

// cancelUpload abandons an upload and what it received: 204.
func cancelUpload(w http.ResponseWriter, req *http.Request, up distribution.BlobWriter) error {
	w.Header().Set("Docker-Upload-UUID", up.ID())
	if err := up.Cancel(req.Context()); err != nil {
		return fmt.Errorf("oci: cancelling upload %s: %w", up.ID(), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// checkRange checks a chunk's Content-Range (start-end, inclusive) when
// the request gives one with its Content-Length: it must start where the
// upload is (else 416 RANGE_INVALID, as the specification says for a
// chunk out of order) and be as long as the body.
func checkRange(req *http.Request, size int64) error {
	cr, cl := req.Header.Get("Content-Range"), req.Header.Get("Content-Length")
	if cr == "" || cl == "" {
		return nil
	}
	from, to, ok := strings.Cut(cr, "-")
	start, err1 := strconv.ParseInt(from, 10, 64)
	end, err2 := strconv.ParseInt(to, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return badRequest(errcode.ErrorCodeBlobUploadInvalid, fmt.Sprintf("Content-Range %q: a chunk's range is <start>-<end>, for example 0-1023", cr))
	}
	if start > end || start != size {
		return errcode.ErrorCodeRangeInvalid.WithMessage(fmt.Sprintf(
			"Content-Range %s: the upload holds %d bytes, so the next chunk starts at %d", cr, size, size))
	}
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n != end-start+1 {
		return errcode.ErrorCodeSizeInvalid.WithMessage(fmt.Sprintf("Content-Range %s holds %d bytes; Content-Length says %s", cr, end-start+1, cl))
	}
	return nil
}

// receive appends the request's body to up. A body over
// Config.MaxRequestBytes is SIZE_INVALID; a body the client stopped
// sending answers 400 (or nothing, when the client went away); a failure
// to store is the registry's.
func (r *Registry) receive(req *http.Request, up distribution.BlobWriter) error {
	body := &bodyReader{r: req.Body}
	if _, err := io.Copy(up, body); err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(body.err, &tooLarge):
			return errcode.ErrorCodeSizeInvalid.WithMessage(fmt.Sprintf(
				"a request may carry at most %d bytes: upload larger blobs in chunks", r.cfg.MaxRequestBytes))
		case body.err != nil && req.Context().Err() != nil:
			return &statusError{status: statusClientClosed, err: errcode.ErrorCodeBlobUploadInvalid.WithMessage("the client went away")}
		case body.err != nil:
			return badRequest(errcode.ErrorCodeBlobUploadInvalid, "reading the request's body failed: "+body.err.Error())
		}
		return fmt.Errorf("oci: storing upload %s: %w", up.ID(), err)
	}
	return nil
}

// statusClientClosed is the status of a request whose client went away
// before sending it whole (nginx's 499): it is written for the log line
// only.
const statusClientClosed = 499

// bodyReader keeps the error reading the body, to tell it from an error
// storing it.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}
