package oci

import (
	"net/http"

	"github.com/distribution/distribution/v3/registry/api/errcode"

	"github.com/corehq/core/untrusted"
)

// sandbox makes every answer of /v2/ harmless to the service's origin,
// where the console keeps the admin token: a blob is whatever a tenant
// pushed (an HTML page, a script), served from the same origin as
// /console/ and /admin/v1. Every answer, errors included, carries the
// sandboxing Content-Security-Policy and nosniff (untrusted.Sandbox): a
// blob opened in a browser is an opaque origin that runs no script, and
// is never read as another type than the one the registry declares. A
// browser's request for a service worker's script is refused
// (untrusted.CheckRequest): no worker of the origin can come from the
// registry. Call it first, before anything is written.
func sandbox(w http.ResponseWriter, req *http.Request) error {
	untrusted.Sandbox(w.Header())
	if err := untrusted.CheckRequest(req); err != nil {
		return errcode.ErrorCodeDenied.WithMessage(err.Error())
	}
	return nil
}
