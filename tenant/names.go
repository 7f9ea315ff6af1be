package tenant

import (
	"strings"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/internal/names"
)

// DefaultRealm is the realm of a release published without one.
const DefaultRealm = "main"

// maxDomainLen is the DNS limit on a host name.
const maxDomainLen = 253

// checkName reports whether s is a valid app, release or realm name
// (names.Valid: 1 to 64 letters, digits, '.', '_' or '-', starting with a
// letter or digit). Names appear in URLs and store keys
// ("<app>/<release>"), so '/' and anything needing escapes are refused.
func checkName(what, s string) error {
	if s == "" {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "%s is required", what)
	}
	if !names.Valid(s) {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "%s %q: use %s", what, s, names.Rule)
	}
	return nil
}

// NormalizeDomain returns the canonical (lower-case) form of a domain. Domains
// are case-insensitive, like host names.
func NormalizeDomain(d string) string { return strings.ToLower(d) }

// checkDomain reports whether d (normalised) is a host name: dot-separated
// labels of letters, digits and '-', not starting or ending with '-'.
func checkDomain(d string) error {
	if d == "" {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "domain is required")
	}
	bad := func() error {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid,
			"domain %q is not a host name (labels of letters, digits and '-', separated by dots)", d)
	}
	if len(d) > maxDomainLen {
		return bad()
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return bad()
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' {
				return bad()
			}
		}
	}
	return nil
}

// checkEnv reports whether every name of env is an environment variable
// name: letters, digits and '_', not starting with a digit.
func checkEnv(env map[string]string) error {
	for name := range env {
		ok := name != "" && len(name) <= 128 && (name[0] < '0' || name[0] > '9')
		for i := 0; ok && i < len(name); i++ {
			ok = isAlnum(name[i]) || name[i] == '_'
		}
		if !ok {
			return errcode.Wrap(errcode.BadRequest, ErrInvalid,
				"env name %q: use letters, digits and '_', not starting with a digit", name)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
