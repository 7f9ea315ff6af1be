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
// default, the tie-break of every order), one page. Its pages go forward
// only, and with the filter's SORT only the first: a cursor (after) is a
// record id, and the records after it in the order of core.id are those
// of a greater id in every implementing type; before, last, page and the
// page offsets would need the cursor's record and its type, and are
// refused.
func findInterface(ctx context.Context, c *call, in *schema.Interface, text string, includeTrashed bool, a pageArgs) (*page, error) {
	if a.hasLast || a.before != "" || a.page > 1 {
		return nil, errcode.New(errcode.BadRequest, "find over the interface %s pages forward only: before, last and page need a record type (find an implementing type instead)", in.Name)
	}
	q, err := bindFilter(ctx, c, in.Name, text) // checks the filter names only the interface's fields
	if err != nil {
		return nil, err
	}
	after := ""
	if a.after != "" && a.after != cursorFirst {
		if len(q.Sort) > 0 {
			return nil, errcode.New(errcode.BadRequest, "find over the interface %s with SORT answers its first page only: after needs the order of core.id (no SORT) or a record type", in.Name)
		}
		after = a.after
	}
	limit := c.schema.cfg.DefaultPageSize
	if a.hasFirst {
		limit = a.first
	}
	if limit < 1 || limit > c.schema.cfg.MaxPageSize {
		return nil, errcode.New(errcode.BadRequest, "page size %d is out of range: it must be between 1 and %d", limit, c.schema.cfg.MaxPageSize)
	}
	var recs []*store.Record
	for _, impl := range in.Impls {
		tq, err := bindFilter(ctx, c, impl, text)
		if err != nil {
			return nil, err
		}
		if after != "" {
			cur, err := bindFilter(ctx, c, impl, "core.id > "+arcql.Quote(after))
			if err != nil {
				return nil, err
			}
			tq.Filter = &arcql.And{Terms: []arcql.Expr{tq.Filter, cur.Filter}}
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
	pg := &page{c: c, base: store.Query{Type: in.Name}, limit: limit, iface: true, cursorGiven: after != ""}
	if len(recs) > limit {
		pg.more = true
		recs = recs[:limit]
	}
	if c.Principal.Kind != auth.InstanceAdmin {
		for i, r := range recs {
			recs[i] = shown(ctx, c, r)
		}
	}
	pg.nodes = newBatches(recs)
	return pg, nil
}

// newBatches returns the nodes of records of one or several types, in
// their order: references load per batch of siblings of one type (a field
// name may reference different types in two implementations).
func newBatches(recs []*store.Record) []*node {
	byType := map[string][]*store.Record{}
	for _, r := range recs {
		byType[r.Type] = append(byType[r.Type], r)
	}
	if len(byType) < 2 {
		return newBatch(recs)
	}
	loaded := make(map[*store.Record]*node, len(recs))
	for _, group := range byType {
		for _, n := range newBatch(group) {
			loaded[n.rec] = n
		}
	}
	nodes := make([]*node, len(recs))
	for i, r := range recs {
		nodes[i] = loaded[r]
	}
	return nodes
}

// getMany reads the records of ids of the record type typ, or of an
// interface's implementations: an id is read from the first implementing
// type, in name order, that holds it.
func getMany(ctx context.Context, c *call, typ string, ids []string) (map[string]*store.Record, error) {
	in, ok := c.schema.model.Interface(typ)
	if !ok {
		return c.Store.GetMany(ctx, c.Instance.ID, typ, ids)
	}
	out := map[string]*store.Record{}
	for _, impl := range in.Impls {
		var rest []string
		for _, id := range ids {
			if _, done := out[id]; !done {
				rest = append(rest, id)
			}
		}
		if len(rest) == 0 {
			break
		}
		found, err := c.Store.GetMany(ctx, c.Instance.ID, impl, rest)
		if err != nil {
			return nil, err
		}
		for id, r := range found {
			out[id] = r
		}
	}
	return out, nil
}

// interfaceRef converts the input of a reference typed by an interface:
// {core: {id}} names an existing record (or one the same upsert writes)
// of any implementing type, {core: {id, impl}} one of the type impl. A
// record cannot be created through such a field: which type would it be?
// The reference is kept as the id alone, as every reference.
func (u *upserter) interfaceRef(in *schema.Interface, v any, path string) (any, error) {
	obj, _ := v.(map[string]any)
	core, _ := obj["core"].(map[string]any)
	id, _ := core["id"].(string)
	impl, _ := core["impl"].(string)
	if len(obj) != 1 || id == "" || len(core) > 2 || (len(core) == 2 && core["impl"] == nil) {
		return nil, errcode.New(errcode.BadRequest, "%s: a reference to the interface %s is {core: {id, impl}} (impl, the implementing type, optional): it names an existing record and creates none", path, in.Name)
	}
	if !validID(id) {
		return nil, errcode.New(errcode.BadRequest, "%s.core.id: %q is not a valid id (1 to 128 characters, no control characters)", path, id)
	}
	typ := in.Name
	if impl != "" {
		if !slices.Contains(in.Impls, impl) {
			return nil, errcode.New(errcode.BadRequest, "%s.core.impl: %s does not implement %s (its implementations: %v)", path, impl, in.Name, in.Impls)
		}
		typ = impl
	}
	if u.refs[typ] == nil {
		u.refs[typ] = map[string]string{}
	}
	u.refs[typ][id] = path
	return id, nil
}

// writtenAs reports whether written (type and id of the records an upsert
// writes) holds id as a record of typ, or of a type implementing typ.
func writtenAs(m *schema.Model, written map[string]bool, typ, id string) bool {
	if written[typ+"\x00"+id] {
		return true
	}
	if in, ok := m.Interface(typ); ok {
		for _, impl := range in.Impls {
			if written[impl+"\x00"+id] {
				return true
			}
		}
	}
	return false
}

// implements reports whether the record type typ is target or implements
// the interface target.
func implements(m *schema.Model, typ, target string) bool {
	if typ == target {
		return true
	}
	in, ok := m.Interface(target)
	return ok && slices.Contains(in.Impls, typ)
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
