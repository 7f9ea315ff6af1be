package gql

import (
	"context"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// maxSecretTerms bounds the @secret comparisons of one filter: each costs
// an Argon2id verification per candidate record.
const maxSecretTerms = 2

// resolveSecrets rewrites the comparisons of a parsed (unbound) filter on
// @secret fields before binding. A secret is kept as a salted hash, so no
// store can compare it: `secret = 'x'` is allowed only as a term of the
// filter's top-level AND that also holds an equality on core.id or on a
// single @unique field (the anchor). resolveSecrets finds the at most one
// record the anchor names, verifies each secret term against its hash and
// replaces the terms by `core.id IN [that id]` when all match, or by a
// filter that matches nothing. Any other use of a @secret field (another
// operator, under OR or NOT, without an anchor) is refused, so a filter
// costs at most maxSecretTerms verifications and is never a scan.
func resolveSecrets(ctx context.Context, c *call, typ string, q *arcql.Query) error {
	t, ok := c.schema.model.Type(typ)
	if !ok || q.Filter == nil || !hasSecret(t) {
		return nil
	}
	terms := conjuncts(q.Filter, nil)
	var secrets []*arcql.Compare
	var anchor *arcql.Compare
	rest := make([]arcql.Expr, 0, len(terms))
	for _, e := range terms {
		cmp, isCmp := e.(*arcql.Compare)
		if isCmp && isSecret(t, cmp.Path.String()) {
			if cmp.Op != arcql.OpEq || cmp.Value.Kind != arcql.KindString {
				return secretMisuse(t, cmp.Path.Parts[0])
			}
			secrets = append(secrets, cmp)
			continue
		}
		if name := secretIn(t, e); name != "" {
			return secretMisuse(t, name)
		}
		if isCmp && anchor == nil && isAnchor(t, cmp) {
			anchor = cmp
		}
		rest = append(rest, e)
	}
	switch {
	case len(secrets) == 0:
		return nil
	case anchor == nil:
		return errcode.New(errcode.BadFilter, "%s.%s is @secret: compare it by equality alongside an equality on core.id or a @unique field of %s (a AND b), which names the one record whose hash is verified", t.Name, secrets[0].Path.Parts[0], t.Name)
	case len(secrets) > maxSecretTerms:
		return errcode.New(errcode.BadFilter, "a filter may compare at most %d @secret values", maxSecretTerms)
	}
	aq, err := arcql.Bind(&arcql.Query{Filter: anchor}, c.schema.model, typ, c.Instance.ID)
	if err != nil {
		return errcode.Wrap(errcode.BadFilter, err, "%s", err.Error())
	}
	found, err := c.Store.Find(ctx, c.Instance.ID, &store.Query{Type: typ, Filter: aq.Filter, IncludeTrashed: true, Limit: 2})
	if err != nil {
		return storeError(err)
	}
	ids := []string{}
	if len(found) == 1 {
		r := found[0]
		matches := true
		for _, s := range secrets {
			hash, _ := r.Fields[s.Path.Parts[0]].(string)
			if hash == "" {
				matches = false
				break
			}
			ok, _, err := c.Accounts.VerifyPassword(ctx, s.Value.Str, hash)
			if err != nil {
				return errcode.Wrap(errcode.Unavailable, err, "the request ended while waiting to verify a @secret value")
			}
			if !ok {
				matches = false
				break
			}
		}
		if matches {
			ids = append(ids, r.ID)
		}
	}
	rest = append(rest, arcql.NewInIDs("core.id", ids))
	q.Filter = &arcql.And{Terms: rest}
	return nil
}

// secretMisuse refuses a use of a @secret field other than equality.
func secretMisuse(t *schema.Type, field string) error {
	return errcode.New(errcode.BadFilter, "%s.%s is @secret: it can only be compared by equality with a string, as a term of the filter's top-level AND (a AND b)", t.Name, field)
}

// hasSecret reports whether t has a @secret field.
func hasSecret(t *schema.Type) bool {
	for _, f := range t.Fields {
		if f.Rules != nil && f.Rules.Secret {
			return true
		}
	}
	return false
}

// isSecret reports whether name is a @secret field of t.
func isSecret(t *schema.Type, name string) bool {
	f, ok := t.Field(name)
	return ok && f.Rules != nil && f.Rules.Secret
}

// isAnchor reports whether cmp names at most one record of t: an
// equality on core.id or on a single @unique field, with a value.
func isAnchor(t *schema.Type, cmp *arcql.Compare) bool {
	if cmp.Op != arcql.OpEq || cmp.Value.Kind == arcql.KindNull {
		return false
	}
	if cmp.Path.String() == "core.id" {
		return true
	}
	f, ok := t.Field(cmp.Path.String())
	return ok && f.Unique && !f.List && f.Kind != schema.KindRef
}

// conjuncts appends the terms of e's top-level AND (nested ANDs
// flattened) to terms.
func conjuncts(e arcql.Expr, terms []arcql.Expr) []arcql.Expr {
	and, ok := e.(*arcql.And)
	if !ok {
		return append(terms, e)
	}
	for _, x := range and.Terms {
		terms = conjuncts(x, terms)
	}
	return terms
}

// secretIn returns the name of a @secret field of t that e uses, or "".
func secretIn(t *schema.Type, e arcql.Expr) string {
	path := func(p arcql.Path) string {
		if len(p.Parts) > 0 && isSecret(t, p.Parts[0]) {
			return p.Parts[0]
		}
		return ""
	}
	switch e := e.(type) {
	case *arcql.And:
		for _, x := range e.Terms {
			if n := secretIn(t, x); n != "" {
				return n
			}
		}
	case *arcql.Or:
		for _, x := range e.Terms {
			if n := secretIn(t, x); n != "" {
				return n
			}
		}
	case *arcql.Not:
		return secretIn(t, e.X)
	case *arcql.Exist:
		return path(e.Path)
	case *arcql.Compare:
		return path(e.Path)
	case *arcql.Range:
		return path(e.Path)
	}
	return ""
}
