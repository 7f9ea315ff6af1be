package gql

import (
	"errors"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/store"
)

// resolveFind answers find: a page of the records a filter matches.
func resolveFind(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if err := requireData(c); err != nil {
		return nil, err
	}
	typ, _ := p.Args["type"].(string)
	text, _ := p.Args["arcql"].(string)
	includeTrashed, _ := p.Args["includeTrashed"].(bool)
	var a pageArgs
	a.first, a.hasFirst = p.Args["first"].(int)
	a.last, a.hasLast = p.Args["last"].(int)
	a.after, _ = p.Args["after"].(string)
	a.before, _ = p.Args["before"].(string)
	a.page, _ = p.Args["page"].(int)
	if in, ok := c.schema.model.Interface(typ); ok {
		return findInterface(p.Context, c, in, text, includeTrashed, a)
	}
	q, err := bindFilter(p.Context, c, typ, text)
	if err != nil {
		return nil, err
	}
	filter, err := scopeFilter(p.Context, c, typ, "find", q.Filter, q.Sort)
	if err != nil {
		return nil, err
	}
	base := store.Query{Type: typ, Filter: filter, Sort: q.Sort, IncludeTrashed: includeTrashed}
	return findPage(p.Context, c, base, a)
}

// resolveGet answers get: one record, or null when it does not exist or
// is trashed.
func resolveGet(p graphql.ResolveParams) (any, error) {
	c := callFrom(p.Context)
	if err := requireData(c); err != nil {
		return nil, err
	}
	typ, _ := p.Args["type"].(string)
	id, _ := p.Args["id"].(string)
	if in, ok := c.schema.model.Interface(typ); ok {
		return getInterface(p.Context, c, in, id)
	}
	r, err := c.Store.Get(p.Context, c.Instance.ID, typ, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeError(err)
	}
	if r.Trashed != nil || !visible(p.Context, c, r) {
		return nil, nil
	}
	return newBatch([]*store.Record{shown(p.Context, c, r)})[0], nil
}
