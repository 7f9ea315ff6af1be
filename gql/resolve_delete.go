package gql

import (
	"context"
	"errors"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// maxBulk bounds the records one delete, trash or untrash may touch, so
// that one request cannot hold the store for long; more needs several
// calls.
const maxBulk = 10_000

// selectAll returns every record of typ an ArcQL text selects that the
// caller may run operation on, at most maxBulk.
func selectAll(ctx context.Context, c *call, typ, text, operation string, includeTrashed bool) ([]*store.Record, error) {
	q, err := bindFilter(ctx, c, typ, text)
	if err != nil {
		return nil, err
	}
	filter, err := scopeFilter(ctx, c, typ, operation, q.Filter, q.Sort)
	if err != nil {
		return nil, err
	}
	recs, err := c.Store.Find(ctx, c.Instance.ID, &store.Query{Type: typ, Filter: filter, IncludeTrashed: includeTrashed, Limit: maxBulk + 1})
	if err != nil {
		return nil, storeError(err)
	}
	if len(recs) > maxBulk {
		return nil, errcode.New(errcode.BadRequest, "the filter selects more than %d %s records; narrow it and repeat", maxBulk, typ)
	}
	out := recs[:0]
	for _, r := range recs {
		if may(ctx, c, r, operation) {
			out = append(out, r)
		}
	}
	return out, nil
}

// resolveDelete answers delete. Records that a list reference still points
// at are not deleted — the whole call fails with REFERENCED naming the
// referencing Type.field — unless clearArrayReferences, which removes
// those list entries in the same write.
func resolveDelete(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if err := requireData(c); err != nil {
		return nil, err
	}
	typ, _ := p.Args["type"].(string)
	text, _ := p.Args["arcql"].(string)
	clear, _ := p.Args["clearArrayReferences"].(bool)
	if err := recordTypeArg(c, "delete", typ); err != nil {
		return nil, err
	}
	recs, err := selectAll(p.Context, c, typ, text, "delete", true)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	ids := make([]string, len(recs))
	doomed := make(map[string]bool, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
		doomed[r.ID] = true
	}
	var ops []store.Op
	for _, t := range c.schema.model.Types {
		for _, f := range t.Fields {
			if !f.List || f.Kind != schema.KindRef || !implements(c.schema.model, typ, f.Type) {
				continue
			}
			referrers, err := c.Store.Find(p.Context, c.Instance.ID, &store.Query{
				Type:           t.Name,
				Filter:         &arcql.InIDs{Field: f.Name, IDs: ids},
				IncludeTrashed: true,
				Limit:          maxBulk + 1,
			})
			if err != nil {
				return nil, storeError(err)
			}
			for _, r := range referrers {
				if t.Name == typ && doomed[r.ID] {
					continue
				}
				for _, ref := range store.Strings(r.Fields[f.Name]) {
					if !doomed[ref] {
						continue
					}
					if !clear {
						return nil, errcode.New(errcode.Referenced,
							"%s %s is still referenced by %s.%s of %s %s; pass clearArrayReferences=true to remove the references and delete",
							typ, ref, t.Name, f.Name, t.Name, r.ID)
					}
					ops = append(ops, store.Op{Kind: store.OpRemoveRef, Type: t.Name, ID: r.ID, Field: f.Name, RefID: ref, Now: c.now})
				}
			}
		}
	}
	first := len(ops)
	for _, id := range ids {
		ops = append(ops, store.Op{Kind: store.OpDelete, Type: typ, ID: id, Now: c.now})
	}
	return writeCounted(p.Context, c, ops, first)
}

// writeCounted writes ops in one transaction and answers how many of
// ops[from:] changed a record.
func writeCounted(ctx context.Context, c *call, ops []store.Op, from int) (any, error) {
	results, err := c.write(ctx, ops)
	if err != nil {
		return nil, storeError(err)
	}
	n := 0
	for _, r := range results[from:] {
		if r.Changed {
			n++
		}
	}
	return n, nil
}

// resolveTrash answers trash (on) and untrash (off).
func resolveTrash(on bool) graphql.FieldResolveFn {
	return func(p graphql.ResolveParams) (any, error) {
		c := callFrom(p.Context)
		if err := requireData(c); err != nil {
			return nil, err
		}
		typ, _ := p.Args["type"].(string)
		text, _ := p.Args["arcql"].(string)
		operation := "trash"
		if !on {
			operation = "untrash"
		}
		if err := recordTypeArg(c, operation, typ); err != nil {
			return nil, err
		}
		recs, err := selectAll(p.Context, c, typ, text, operation, !on)
		if err != nil {
			return nil, err
		}
		kind := store.OpTrash
		if !on {
			kind = store.OpUntrash
		}
		var ops []store.Op
		for _, r := range recs {
			if (r.Trashed == nil) == on {
				ops = append(ops, store.Op{Kind: kind, Type: typ, ID: r.ID, Now: c.now})
			}
		}
		if len(ops) == 0 {
			return 0, nil
		}
		return writeCounted(p.Context, c, ops, 0)
	}
}

// resolveLink answers link (on) and unlink (off).
func resolveLink(on bool) graphql.FieldResolveFn {
	return func(p graphql.ResolveParams) (any, error) {
		c := callFrom(p.Context)
		if err := requireData(c); err != nil {
			return nil, err
		}
		from, _ := p.Args["from"].(string)
		to, _ := p.Args["to"].(string)
		via, _ := p.Args["via"].(string)
		fromID, _ := p.Args["whereFromID"].(string)
		toID, _ := p.Args["andToID"].(string)
		if err := recordTypeArg(c, "link and unlink", from, to); err != nil {
			return nil, err
		}
		t, _ := c.schema.model.Type(from)
		f, ok := t.Field(via)
		if !ok || f.Kind != schema.KindRef || !implements(c.schema.model, to, f.Type) {
			return nil, errcode.New(errcode.BadRequest, "%s.%s is not a reference to %s", from, via, to)
		}
		src, err := c.Store.Get(p.Context, c.Instance.ID, from, fromID)
		if err != nil || !visible(p.Context, c, src) {
			return nil, notFound(err, from, fromID)
		}
		operation := "unlink"
		if on {
			operation = "link"
		}
		if !may(p.Context, c, src, operation) {
			return nil, errcode.New(errcode.Forbidden, "%s %s belongs to another account", from, fromID)
		}
		if err := linkRules(t, f, src, on, toID); err != nil {
			return nil, err
		}
		if on {
			// The target need only exist: a reference may name a record
			// the caller cannot read (checkRefs).
			if _, err := c.Store.Get(p.Context, c.Instance.ID, to, toID); err != nil {
				return nil, notFound(err, to, toID)
			}
		}
		var op store.Op
		switch {
		case f.List && on:
			op = store.Op{Kind: store.OpAddRef, Type: from, ID: fromID, Field: via, RefID: toID, Now: c.now}
		case f.List:
			op = store.Op{Kind: store.OpRemoveRef, Type: from, ID: fromID, Field: via, RefID: toID, Now: c.now}
		case on:
			op = store.Op{Kind: store.OpUpsert, Type: from, ID: fromID, Set: map[string]any{via: toID}, Now: c.now}
		default:
			if cur, _ := src.Fields[via].(string); cur != toID {
				return false, nil
			}
			op = store.Op{Kind: store.OpUpsert, Type: from, ID: fromID, Set: map[string]any{via: nil}, Now: c.now}
		}
		if f.Rules != nil && f.Rules.Immutable {
			op.Keep = []string{via} // linkRules read src before this write
		}
		if _, err := c.write(p.Context, []store.Op{op}); err != nil {
			return nil, storeError(err)
		}
		return true, nil
	}
}

// notFound turns a failed Get into NOT_FOUND naming the record.
func notFound(err error, typ, id string) error {
	if err == nil || errors.Is(err, store.ErrNotFound) {
		return errcode.New(errcode.NotFound, "%s %s does not exist", typ, id)
	}
	return storeError(err)
}
