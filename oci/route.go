package oci

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/distribution/distribution/v3/registry/api/errcode"
	"github.com/opencontainers/go-digest"

	"github.com/corehq/core/internal/names"
)

// What a /v2/ request addresses.
const (
	kindBase      = "base"      // /v2/: the API check
	kindUnknown   = ""          // another path under /v2/: 404
	kindCatalog   = "_catalog"  // /v2/_catalog: every repository
	kindBlobs     = "blobs"     // /v2/{app}/{name}/blobs/…
	kindManifests = "manifests" // /v2/{app}/{name}/manifests/{tag or digest}
	kindTags      = "tags"      // /v2/{app}/{name}/tags/list
	kindReferrers = "referrers" // /v2/{app}/{name}/referrers/{digest}
)

// route is a /v2/ request's target.
type route struct {
	kind string
	// app and name make the repository {app}/{name}; empty for the base
	// and the catalog.
	app, name string
	// ref is what follows kind: a digest, uploads/…, a tag or "list".
	ref string
}

// parseRoute reads the target of a request path. A repository is always
// two components, the app and the function: anything else is
// NAME_INVALID. A path that is none of the API's is kindUnknown.
func parseRoute(p string) (route, error) {
	rest, ok := strings.CutPrefix(p, "/v2")
	if !ok || rest == "" || rest == "/" {
		return route{kind: kindBase}, nil
	}
	rest = strings.TrimPrefix(rest, "/")
	if rest == kindCatalog {
		return route{kind: kindCatalog}, nil
	}
	parts := strings.Split(rest, "/")
	if len(parts) >= 4 && isKind(parts[2]) {
		rt := route{kind: parts[2], app: parts[0], name: parts[1], ref: strings.Join(parts[3:], "/")}
		for _, n := range [...]string{rt.app, rt.name} {
			if !validName(n) {
				return route{}, errcode.ErrorCodeNameInvalid.WithMessage(fmt.Sprintf(
					"repository %s/%s: app and function names are 1 to %d lowercase letters, digits, '.', '_' and '-', starting with a letter or digit",
					rt.app, rt.name, names.MaxLen))
			}
		}
		return rt, nil
	}
	for i := 1; i < len(parts)-1; i++ {
		if isKind(parts[i]) {
			return route{}, errcode.ErrorCodeNameInvalid.WithMessage(fmt.Sprintf(
				"repository %s: repositories are named {app}/{function}, for example bookstore/verify-stripe", strings.Join(parts[:i], "/")))
		}
	}
	return route{kind: kindUnknown}, nil
}

func isKind(s string) bool {
	return s == kindBlobs || s == kindManifests || s == kindTags || s == kindReferrers
}

// validName: a names.Valid name in lower case. Container references are
// lowercase, so the upper-case letters names allows are not allowed here;
// distribution checks the finer grammar (no separator at the end, none
// repeated).
func validName(s string) bool {
	return names.Valid(s) && strings.ToLower(s) == s
}

// validVersion reports whether a tag can name a function version
// (names.Valid, which fits inside the OCI tag grammar).
func validVersion(s string) bool { return names.Valid(s) }

// isDigest reports whether a manifest reference is meant as a digest
// (else it is a tag): tags hold no ':'. A malformed digest answers
// DIGEST_INVALID.
func isDigest(ref string) bool { return strings.Contains(ref, ":") }

// The grammars of a path's digest and upload id (OCI Distribution, as
// distribution's routes match them).
var (
	digestGrammar   = regexp.MustCompile(`^` + digest.DigestRegexp.String() + `$`)
	uploadIDGrammar = regexp.MustCompile(`^[a-zA-Z0-9-_.=]+$`)
)

// pathDigest reads the digest a path names. A reference of the digest
// grammar that is no digest distribution knows (an unknown algorithm, a
// wrong length) is DIGEST_INVALID; anything else makes the path none of
// the API's (404), as distribution's routes answer it.
func pathDigest(req *http.Request, ref string) (digest.Digest, error) {
	d, err := digest.Parse(ref)
	switch {
	case err == nil:
		return d, nil
	case digestGrammar.MatchString(ref):
		return "", errcode.ErrorCodeDigestInvalid.WithMessage(fmt.Sprintf("%q is not a digest: %v", ref, err))
	}
	return "", errNoEndpoint(req)
}

// validUploadID reports whether a path's upload id can be one (upload
// ids are UUIDs; "." and ".." are not names).
func validUploadID(id string) bool {
	return uploadIDGrammar.MatchString(id) && id != "." && id != ".."
}
