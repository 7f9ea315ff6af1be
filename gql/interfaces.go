package gql

import (
	"context"
	"errors"
	"slices"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// recordTypeArg refuses an interface where op takes a record type
// (CoreMutationType lists both: find and get read an interface).
func recordTypeArg(c *call, op string, names ...string) error {
	for _, name := range names {
		if _, ok := c.schema.model.Interface(name); ok {
			return errcode.New(errcode.BadRequest, "%s is an interface: %s takes a record type (find and get read the records of an interface's implementations)", name, op)
		}
	}
	return nil
}

// findInterface answers find over an interface: the records of every
// implementing type that the filter (bound against the interface's fields)
// matches and the caller may read, in the filter's order (core.id by
// default, the tie-break of every order), one page. A page of an
// interface is the first one only: its cursors name records of different
// types, so after, before, last and page are refused.
func findInterface(ctx context.Context, c *call, in *schema.Interface, text string, includeTrashed bool, a pageArgs) (*page, error) {
	if a.hasLast || (a.after != "" && a.after != cursorFirst) || a.before != "" || a.page > 1 {
		return nil, errcode.New(errcode.BadRequest, "find over the interface %s answers its first page only: after, before, last and page need a record type (find each implementing type to page through it)", in.Name)
	}
	q, err := bindFilter(ctx, c, in.Name, text) // checks the filter names only the interface's fields
	if err != nil {
		return nil, err
	}
	limit := c.schema.cfg.DefaultPageSize
	if a.hasFirst {
		limit = a.first
	}
	if limit < 1 || limit > c.schema.cfg.MaxPageSize {
		return nil, errcode.New(errcode.BadRequest, "page size %d is out of range: it must be between 1 and %d", limit, c.schema.cfg.MaxPageSize)
	}
	var recs []*store.Record
	var nodes []*node
	for _, impl := range in.Impls {
		tq, err := bindFilter(ctx, c, impl, text)
		if err != nil {
			return nil, err
		}
		filter, err := scopeFilter(ctx, c, impl, "find", tq.Filter, tq.Sort)
		if err != nil {
			return nil, err
		}
		found, err := c.Store.Find(ctx, c.Instance.ID, &store.Query{Type: impl, Filter: filter, Sort: tq.Sort, IncludeTrashed: includeTrashed, Limit: limit + 1})
		if err != nil {
			return nil, storeError(err)
		}
		recs = append(recs, found...)
	}
	slices.SortStableFunc(recs, func(x, y *store.Record) int { return arcql.CompareSort(q.Sort, x, y) })
	pg := &page{c: c, base: store.Query{Type: in.Name}, limit: limit, iface: true}
	if len(recs) > limit {
		pg.more = true
		recs = recs[:limit]
	}
	if c.Principal.Kind != auth.InstanceAdmin {
		for i, r := range recs {
			recs[i] = shown(ctx, c, r)
		}
	}
	// References load per batch of siblings of one type (a field name may
	// reference different types in two implementations).
	byType := map[string][]*store.Record{}
	for _, r := range recs {
		byType[r.Type] = append(byType[r.Type], r)
	}
	loaded := map[*store.Record]*node{}
	for _, group := range byType {
		for _, n := range newBatch(group) {
			loaded[n.rec] = n
		}
	}
	for _, r := range recs {
		nodes = append(nodes, loaded[r])
	}
	pg.nodes = nodes
	return pg, nil
}

// getInterface answers get over an interface: the record with the id among
// the implementing types' (in name order), or null.
func getInterface(ctx context.Context, c *call, in *schema.Interface, id string) (any, error) {
	for _, impl := range in.Impls {
		r, err := c.Store.Get(ctx, c.Instance.ID, impl, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, storeError(err)
		}
		if r.Trashed != nil || !visible(ctx, c, r) {
			continue
		}
		return newBatch([]*store.Record{shown(ctx, c, r)})[0], nil
	}
	return nil, nil
}
