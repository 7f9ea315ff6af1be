package gql

import (
	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// visible reports whether the caller may see a record. The instance token
// sees everything; a user session sees the records its account created
// and its own Account record (the owner rule).
func visible(c *call, r *store.Record) bool {
	if c.Principal.Kind != auth.User {
		return true
	}
	return r.CreatedBy == c.Principal.AccountID || (r.Type == "Account" && r.ID == c.Principal.AccountID)
}

// ownerFilter narrows a bound filter to what the caller may see, so that
// pages of a user's find are full pages of its own records.
func ownerFilter(c *call, typ string, f arcql.Expr) arcql.Expr {
	if c.Principal.Kind != auth.User {
		return f
	}
	acct := arcql.Value{Kind: arcql.KindString, Str: c.Principal.AccountID}
	var owner arcql.Expr = &arcql.Compare{Path: arcql.Path{Parts: []string{"core.createdBy"}}, Op: arcql.OpEq, Value: acct}
	if typ == "Account" {
		owner = &arcql.Or{Terms: []arcql.Expr{owner, &arcql.Compare{Path: arcql.Path{Parts: []string{"core.id"}}, Op: arcql.OpEq, Value: acct}}}
	}
	if f == nil {
		return owner
	}
	return &arcql.And{Terms: []arcql.Expr{f, owner}}
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
