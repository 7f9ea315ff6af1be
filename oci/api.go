package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/distribution/v3/registry/api/errcode"
	"github.com/labstack/echo/v4"
)

// The door of the OCI Distribution API: every request is sandboxed,
// authenticated, routed to its endpoint (api_blobs.go, api_uploads.go,
// api_manifests.go, api_tags.go, referrers.go) by what it addresses
// (route.go) and its method, and its failure answered in the OCI error
// format.

// Handle serves one request of the OCI Distribution API as an echo
// handler. Failures are answered in the OCI error format (the one
// container clients read); the cause of a 5xx is returned for the
// server's log line, after the answer is written.
func (r *Registry) Handle(c echo.Context) error {
	return r.serve(c.Response(), c.Request())
}

// apiVersion is the header every answer carries: clients look for it,
// on the 401 of /v2/ too, to know they talk to a registry.
const apiVersion = "registry/2.0"

// serve sandboxes the answer (sandbox.go), checks who calls and what
// for, bounds blob transfers, and hands the request to its endpoint
// (api_*.go); pushes and deletions of tags go through push.go.
func (r *Registry) serve(w http.ResponseWriter, req *http.Request) error {
	w.Header().Set("Docker-Distribution-API-Version", apiVersion)
	if err := sandbox(w, req); err != nil {
		return answer(w, err)
	}
	who, err := r.authenticate(req)
	if err != nil {
		return answer(w, err)
	}
	rt, err := parseRoute(req.URL.Path)
	if err != nil {
		return answer(w, err)
	}
	if err := who.mayUse(rt); err != nil {
		return answer(w, err)
	}
	if err := r.checkDeclaredSizes(req, rt); err != nil {
		return answer(w, err)
	}
	if rt.kind == kindBlobs {
		if req.ContentLength > r.cfg.MaxRequestBytes {
			return answer(w, errcode.ErrorCodeSizeInvalid.WithMessage(
				fmt.Sprintf("a request may carry at most %d bytes: upload larger blobs in chunks", r.cfg.MaxRequestBytes)))
		}
		req.Body = http.MaxBytesReader(w, req.Body, r.cfg.MaxRequestBytes)
		who.limitMount(req)
		declineForeignMount(req)
		// Blobs may take longer than the API calls the server's time-outs
		// are made for (a layer on a slow link).
		deadline := time.Now().Add(r.cfg.TransferTimeout)
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(deadline) // not supported by every writer (tests); the server's time-out then holds
		_ = rc.SetWriteDeadline(deadline)
	}
	return answer(w, r.route(w, req, rt))
}

// route calls the endpoint of rt for the request's method. An endpoint
// writes its success itself and returns its failure, which serve answers.
func (r *Registry) route(w http.ResponseWriter, req *http.Request, rt route) error {
	m := req.Method
	switch rt.kind {
	case kindBase:
		return apiBase(w)
	case kindUnknown:
		return errNoEndpoint(req)
	case kindCatalog:
		if m == http.MethodGet {
			return r.catalog(w, req)
		}
		return notAllowed(w, req, http.MethodGet)
	}
	// The other endpoints are a repository's.
	repo, err := r.repository(req.Context(), rt.app, rt.name)
	if err != nil {
		return err
	}
	switch rt.kind {
	case kindTags:
		if m == http.MethodGet {
			return r.tags(w, req, repo)
		}
		return notAllowed(w, req, http.MethodGet)
	case kindReferrers:
		if m == http.MethodGet || m == http.MethodHead {
			return r.referrers(w, req, rt, repo)
		}
		return notAllowed(w, req, http.MethodGet, http.MethodHead)
	case kindManifests:
		switch m {
		case http.MethodGet, http.MethodHead:
			return r.getManifest(w, req, rt, repo)
		case http.MethodPut:
			if isDigest(rt.ref) {
				return r.pushDigest(w, req, rt, repo)
			}
			return r.pushTag(w, req, rt, repo)
		case http.MethodDelete:
			return r.deleteManifest(w, req, rt, repo)
		}
		return notAllowed(w, req, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodPut)
	}
	// kindBlobs: a blob, or an upload.
	if rt.ref == "uploads" || rt.ref == "uploads/" {
		if m == http.MethodPost {
			return r.startUpload(w, req, rt, repo)
		}
		if m == http.MethodOptions {
			return notAllowed(w, req, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodPost, http.MethodPut)
		}
		// The other methods name an upload; this URL names none.
		return errcode.ErrorCodeBlobUploadUnknown.WithMessage("this URL names no upload: use the Location the upload's POST answered")
	}
	if id, ok := strings.CutPrefix(rt.ref, "uploads/"); ok {
		if !validUploadID(id) {
			return errNoEndpoint(req)
		}
		switch m {
		case http.MethodGet, http.MethodHead:
			return r.uploadStatus(w, req, rt, repo, id)
		case http.MethodPatch, http.MethodPut, http.MethodDelete:
			return r.continueUpload(w, req, rt, repo, id)
		}
		return notAllowed(w, req, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodPut)
	}
	switch m {
	case http.MethodGet, http.MethodHead:
		return r.getBlob(w, req, rt, repo)
	case http.MethodDelete:
		return r.deleteBlob(w, req, rt, repo)
	}
	return notAllowed(w, req, http.MethodDelete, http.MethodGet, http.MethodHead)
}

// apiBase answers /v2/, the API check clients (and docker login) start
// with: 200 and an empty JSON object, to any method.
func apiBase(w http.ResponseWriter) error {
	const empty = "{}"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(empty)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, empty)
	return nil
}

// notAllowed answers a method an endpoint does not serve: 405 UNSUPPORTED
// with the Allow header, or 200 with it to OPTIONS.
func notAllowed(w http.ResponseWriter, req *http.Request, allow ...string) error {
	w.Header().Set("Allow", strings.Join(allow, ", "))
	if req.Method == http.MethodOptions {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	return errcode.ErrorCodeUnsupported.WithMessage(fmt.Sprintf("%s %s: this endpoint answers %s",
		req.Method, req.URL.Path, strings.Join(allow, ", ")))
}

// answer writes err, if any, in the OCI error format: its code's status
// for an errcode.Error or errcode.Errors (the first one's), the status of
// a statusError, else 500 UNKNOWN with a generic message (never the
// cause's text). It returns err when the status is a 5xx (for the log
// line), else nil.
func answer(w http.ResponseWriter, err error) error {
	if err == nil {
		return nil
	}
	var (
		se     *statusError
		ce     errcode.Error
		ces    errcode.Errors
		body   errcode.Errors
		status = http.StatusInternalServerError
	)
	switch {
	case errors.As(err, &se):
		body, status = errcode.Errors{se.err}, se.status
	case errors.As(err, &ce):
		body, status = errcode.Errors{ce}, ce.Code.Descriptor().HTTPStatusCode
		if ce.Code == errcode.ErrorCodeUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="core"`)
		}
	case errors.As(err, &ces) && len(ces) > 0:
		body = ces
		if first, ok := ces[0].(errcode.Error); ok {
			status = first.Code.Descriptor().HTTPStatusCode
		}
	default:
		body = errcode.Errors{errcode.ErrorCodeUnknown.WithMessage("internal error")}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
	if status >= http.StatusInternalServerError {
		return err
	}
	return nil
}

// statusError is an OCI error answered with another status than its
// code's: a client's mistake that no code of the specification answers
// with a 4xx that says so (distribution answers some with 500 UNKNOWN,
// BLOB_UPLOAD_INVALID with 404).
type statusError struct {
	status int
	err    errcode.Error
}

func (e *statusError) Error() string { return e.err.Error() }

// badRequest is a 400 of code c saying msg.
func badRequest(c errcode.ErrorCode, msg string) error {
	return &statusError{status: http.StatusBadRequest, err: c.WithMessage(msg)}
}

// errNoEndpoint answers a path under /v2/ that is none of the API's.
func errNoEndpoint(req *http.Request) error {
	return &statusError{status: http.StatusNotFound, err: errcode.ErrorCodeUnsupported.WithMessage(
		fmt.Sprintf("%s is not an endpoint of the OCI Distribution API", req.URL.Path))}
}
