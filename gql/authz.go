package gql

import (
	"context"

	"github.com/corehq/core/access"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// owned reports whether the caller may change a record: the instance
// token changes everything; a user session the records its account
// created and its own Account record (the owner rule).
func owned(c *call, r *store.Record) bool {
	if c.Principal.Kind != auth.User {
		return true
	}
	return r.CreatedBy == c.Principal.AccountID || (r.Type == "Account" && r.ID == c.Principal.AccountID)
}

// visible reports whether the caller may read a record: what it owns,
// and what grants let it read (package access). A failure to read the
// grants hides the record rather than showing it.
func visible(ctx context.Context, c *call, r *store.Record) bool {
	if owned(c, r) {
		return true
	}
	rd, err := c.readable(ctx, r.Type)
	return err == nil && rd.Allows(r)
}

// readable returns what the caller may read of typ through grants,
// computed once per request and type.
func (c *call) readable(ctx context.Context, typ string) (*access.Read, error) {
	c.readsMu.Lock()
	defer c.readsMu.Unlock()
	if rd, ok := c.reads[typ]; ok {
		return rd, nil
	}
	var grants []access.Grant
	if c.grants != nil {
		var err error
		if grants, err = c.grants.Grants(ctx, c.Instance.ID, c.now); err != nil {
			return nil, errcode.Wrap(errcode.Internal, err, "internal error")
		}
	}
	rd := access.Reads(grants, c.Principal, typ, c.now)
	if c.reads == nil {
		c.reads = map[string]*access.Read{}
	}
	c.reads[typ] = rd
	return rd, nil
}

// ownerFilter narrows a bound filter to the records the caller may
// change (the owner rule), so that pages of a user's bulk delete are its
// own records.
func ownerFilter(c *call, typ string, f arcql.Expr) arcql.Expr {
	if c.Principal.Kind != auth.User {
		return f
	}
	return and(f, ownTerm(c, typ))
}

// readFilter narrows a bound filter to the records the caller may read:
// its own and those grants let it read, pushed into the store query so
// that pages are full pages.
func readFilter(ctx context.Context, c *call, typ string, f arcql.Expr) (arcql.Expr, error) {
	if c.Principal.Kind != auth.User {
		return f, nil
	}
	rd, err := c.readable(ctx, typ)
	if err != nil {
		return nil, err
	}
	if rd.All {
		return f, nil
	}
	terms := rd.Terms()
	if len(terms) == 0 {
		return and(f, ownTerm(c, typ)), nil
	}
	return and(f, &arcql.Or{Terms: append([]arcql.Expr{ownTerm(c, typ)}, terms...)}), nil
}

// ownTerm matches the records the owner rule gives the caller.
func ownTerm(c *call, typ string) arcql.Expr {
	acct := arcql.Value{Kind: arcql.KindString, Str: c.Principal.AccountID}
	var own arcql.Expr = &arcql.Compare{Path: arcql.Path{Parts: []string{"core.createdBy"}}, Op: arcql.OpEq, Value: acct}
	if typ == "Account" {
		own = &arcql.Or{Terms: []arcql.Expr{own, &arcql.Compare{Path: arcql.Path{Parts: []string{"core.id"}}, Op: arcql.OpEq, Value: acct}}}
	}
	return own
}

func and(f, g arcql.Expr) arcql.Expr {
	if f == nil {
		return g
	}
	return &arcql.And{Terms: []arcql.Expr{f, g}}
}

// requireData fails unless the caller may use the data operations: the
// instance token or a user session. Anonymous callers, even where the
// instance lets them through, may not read or write records.
func requireData(c *call) error {
	if c.Principal.Kind == auth.Anonymous {
		return errcode.New(errcode.Unauthenticated, "authorization required: send a token in the authorization header")
	}
	return nil
}
