package gql

import (
	"context"
	"errors"
	"strings"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/access"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// grantTarget is a record an account's grant names, checked to be the
// account's own before anything is written.
type grantTarget struct{ typ, id, path string }

// member converts one AccessRight.members input that names an account by
// id: "*" (every account) and "anonymous" are taken as they are (no
// Account has those ids); another id must be an account of the instance,
// which the granting account need not be able to read. ok is false for
// any other input.
func (u *upserter) member(v any, path string) (id string, ok bool) {
	obj, _ := v.(map[string]any)
	core, _ := obj["core"].(map[string]any)
	id, _ = core["id"].(string)
	if len(obj) != 1 || len(core) != 1 || id == "" {
		return "", false
	}
	if id != access.Everyone && id != access.Anonymous {
		u.members = append(u.members, grantTarget{typ: "Account", id: id, path: path})
	}
	return id, true
}

// checkAccessRight applies the rules of grants (package access) to one
// AccessRight input, set being its converted fields: the operation names
// are known ones; an account's grant is an RBP on its own records, its
// resourceOwnerId the account (set here); only the instance token grants
// SBPs or names another owner.
func (u *upserter) checkAccessRight(set map[string]any, path string) error {
	for _, f := range [...]struct {
		name string
		vals []string
	}{{"operationType", access.OperationTypes}, {"operation", access.Operations}} {
		if v, ok := set[f.name].(string); ok && !access.ValidOperation(v, f.vals) {
			return errcode.New(errcode.BadRequest, "%s.%s: %q is not one of *, %s", path, f.name, v, strings.Join(f.vals, ", "))
		}
	}
	typ, _ := set["resourceType"].(string)
	if _, known := u.c.schema.model.Type(typ); typ != "" && typ != "*" && !known {
		return errcode.New(errcode.BadRequest, "%s.resourceType: %s is not a type of this schema", path, typ)
	}
	if fields, ok := set["fields"].(string); ok && typ != "" && typ != "*" {
		t, _ := u.c.schema.model.Type(typ)
		for _, f := range access.SplitFields(fields) {
			if _, ok := t.Field(f); !ok {
				return errcode.New(errcode.BadRequest, "%s.fields: %s has no field %s", path, typ, f)
			}
		}
	}
	if err := u.checkMembersSource(set, path); err != nil {
		return err
	}
	p := u.c.Principal
	if p.Kind != auth.User {
		return nil // the instance token grants anything (anonymous callers were refused before)
	}
	if set["permissionType"] == access.SBP {
		return errcode.New(errcode.Forbidden, "%s: only the instance token grants an SBP (scope-based) right; an account grants RBP rights on its own records", path)
	}
	if owner, given := set["resourceOwnerId"]; given && owner != p.AccountID {
		return errcode.New(errcode.Forbidden, "%s.resourceOwnerId: an account grants rights on its own records only", path)
	}
	set["resourceOwnerId"] = p.AccountID
	if res, ok := set["resource"].(string); ok && res != "*" {
		if typ == "" || typ == "*" {
			return errcode.New(errcode.BadRequest, "%s: a grant on one record (resource %q) names its resourceType", path, res)
		}
		u.grantTargets = append(u.grantTargets, grantTarget{typ: typ, id: res, path: path})
	}
	return nil
}

// checkGrantTargets refuses a grant to an account that does not exist,
// and an account's grant on a record it does not own (or that does not
// exist); nothing is written.
func (u *upserter) checkGrantTargets(p graphql.ResolveParams) error {
	written := map[string]bool{}
	for _, op := range u.ops {
		written[op.Type+"\x00"+op.ID] = true
	}
	for _, m := range u.members {
		if _, err := u.c.Store.Get(p.Context, u.c.Instance.ID, m.typ, m.id); err != nil && !written[m.typ+"\x00"+m.id] {
			if errors.Is(err, store.ErrNotFound) {
				return errcode.New(errcode.NotFound, "%s: Account %s does not exist", m.path, m.id)
			}
			return storeError(err)
		}
	}
	for _, t := range u.grantTargets {
		if written[t.typ+"\x00"+t.id] {
			continue // created or changed by this upsert, so the caller's own
		}
		r, err := u.c.Store.Get(p.Context, u.c.Instance.ID, t.typ, t.id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return storeError(err)
		}
		if err != nil || !owned(u.c, r) {
			return errcode.New(errcode.Forbidden, "%s: %s %s is not a record of yours to grant rights on", t.path, t.typ, t.id)
		}
	}
	return nil
}

// write runs ops in one store write, within the instance's quota
// (refused whole, QUOTA_EXCEEDED, past it). A write that touches an
// AccessRight makes the instance's next request read its grants again.
func (c *call) write(ctx context.Context, ops []store.Op) ([]store.OpResult, error) {
	if err := checkFileWrites(ops); err != nil {
		return nil, err
	}
	quota, err := c.recordQuota(ctx)
	if err != nil {
		return nil, err
	}
	return c.writeWithin(ctx, ops, quota)
}

// writeWithin is write within quota; the zero Quota for the writes no
// quota may stop (revoking sessions).
func (c *call) writeWithin(ctx context.Context, ops []store.Op, quota store.Quota) ([]store.OpResult, error) {
	files, err := c.deletedFiles(ctx, ops)
	if err != nil {
		return nil, storeError(err)
	}
	res, err := c.Store.Write(ctx, c.Instance.ID, ops, quota)
	if err == nil {
		c.forgetFiles(ctx, files, ops, res)
	}
	var qe *store.QuotaError
	if errors.As(err, &qe) {
		return nil, tenant.QuotaExceeded(c.Instance, qe)
	}
	if c.grants != nil {
		for _, op := range ops {
			if op.Type == access.Type {
				c.grants.Forget(c.Instance.ID)
				break
			}
		}
	}
	return res, err
}

// checkMembersSource checks a grant's members source: all three of
// membersSourceType, membersSourceField and membersSourceId or none, the
// field a list of Account references of the type.
func (u *upserter) checkMembersSource(set map[string]any, path string) error {
	typ, _ := set["membersSourceType"].(string)
	field, _ := set["membersSourceField"].(string)
	id, _ := set["membersSourceId"].(string)
	if typ == "" && field == "" && id == "" {
		return nil
	}
	if typ == "" || field == "" || id == "" {
		return errcode.New(errcode.BadRequest, "%s: membersSourceType, membersSourceField and membersSourceId go together", path)
	}
	t, ok := u.c.schema.model.Type(typ)
	if !ok {
		return errcode.New(errcode.BadRequest, "%s.membersSourceType: %s is not a type of this schema", path, typ)
	}
	if f, ok := t.Field(field); !ok || f.Kind != schema.KindRef || !f.List || f.Type != "Account" {
		return errcode.New(errcode.BadRequest, "%s.membersSourceField: %s.%s is not a list of Account references", path, typ, field)
	}
	return nil
}
