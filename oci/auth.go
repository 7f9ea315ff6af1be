package oci

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/distribution/distribution/v3/registry/api/errcode"

	"github.com/corehq/core/auth"
)

// principal is who calls the registry: the platform admin (every app),
// or the holder of a publishing token of one app.
type principal struct {
	admin bool
	app   string
}

// loginHelp ends every 401: what to log in with.
const loginHelp = "log in with user " + User + " and, as password, the admin token or a publishing token of the app " +
	"(POST /admin/v1/apps/{app}/registry/tokens)"

// authenticate checks HTTP basic credentials: the user must be core, the
// password the admin token or a publishing token. Every request needs
// them, pulls included; without them the answer is 401 with the Basic
// challenge docker, podman, buildah, crane and skopeo answer by logging
// in.
func (r *Registry) authenticate(req *http.Request) (principal, error) {
	user, pass, ok := req.BasicAuth()
	switch {
	case !ok || pass == "":
		return principal{}, errcode.ErrorCodeUnauthorized.WithMessage("authentication required: " + loginHelp)
	case user != User:
		return principal{}, errcode.ErrorCodeUnauthorized.WithMessage(fmt.Sprintf("unknown user %q: %s", user, loginHelp))
	case auth.TokenMatches(pass, r.adminHash):
		return principal{admin: true}, nil
	}
	tok, ok, err := r.tokens.Check(req.Context(), pass)
	if err != nil {
		return principal{}, fmt.Errorf("%w: %w", errcode.ErrorCodeUnavailable.WithMessage("the registry cannot check credentials right now; try again"), err)
	}
	if !ok {
		return principal{}, errcode.ErrorCodeUnauthorized.WithMessage("invalid password: " + loginHelp)
	}
	return principal{app: tok.App}, nil
}

// mayUse checks that p may address rt: any authenticated caller the API
// check (and a path that is no endpoint, answered 404), the admin alone
// the catalog (it names every app's functions), a publishing token its
// own app's repositories only.
func (p principal) mayUse(rt route) error {
	switch {
	case p.admin || rt.kind == kindBase || rt.kind == kindUnknown:
		return nil
	case rt.kind == kindCatalog:
		return errcode.ErrorCodeDenied.WithMessage("only the admin token may list the repositories of every app; a publishing token may list the tags of its app's repositories")
	case rt.app != p.app:
		return errcode.ErrorCodeDenied.WithMessage(fmt.Sprintf("this publishing token is for app %s; it may not use %s/%s", p.app, rt.app, rt.name))
	}
	return nil
}

// limitMount keeps a cross-repository mount (POST …/blobs/uploads/
// ?mount=<digest>&from=<repository>, which links a blob of another
// repository without uploading it) within what p may read: a mount from
// another app's repository is dropped, and the request becomes an
// ordinary upload, as the OCI specification lets a registry answer.
func (p principal) limitMount(req *http.Request) {
	q := req.URL.Query()
	from := q.Get("from")
	if from == "" || p.admin {
		return
	}
	if app, _, _ := strings.Cut(from, "/"); app == p.app {
		return
	}
	q.Del("mount")
	q.Del("from")
	req.URL.RawQuery = q.Encode()
}
