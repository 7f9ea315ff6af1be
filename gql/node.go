package gql

import (
	"context"

	"github.com/corehq/core/store"
)

// node is a record as resolvers see it. Records read together (one find
// page, one list field) share a batch, so that resolving a reference field
// on any of them loads that field's targets for all of them in one store
// read: N records with references cost one read per reference field.
type node struct {
	rec   *store.Record
	batch *batch
	// core is the source of the record's `core` field.
	core meta
}

// batch is a set of sibling records with their loaded references.
type batch struct {
	nodes []*node
	refs  map[string]*refLoad // by field name
}

type refLoad struct {
	targets map[string]*node
	err     error
}

// newBatch wraps records as one batch of nodes.
func newBatch(recs []*store.Record) []*node {
	b := &batch{nodes: make([]*node, len(recs))}
	nodes := make([]node, len(recs))
	for i, r := range recs {
		nodes[i] = node{rec: r, batch: b, core: meta{rec: r}}
		b.nodes[i] = &nodes[i]
	}
	return b.nodes
}

// ref returns the loaded targets of field (of target type typ) for every
// node of the batch, loading them on first use. Trashed targets are left
// out: they read as null.
func (b *batch) ref(ctx context.Context, field, typ string) (map[string]*node, error) {
	if l, ok := b.refs[field]; ok {
		return l.targets, l.err
	}
	seen := map[string]bool{}
	var ids []string
	add := func(v any) {
		if id, ok := v.(string); ok && id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, n := range b.nodes {
		switch v := n.rec.Fields[field].(type) {
		case []any:
			for _, e := range v {
				add(e)
			}
		case []string:
			for _, e := range v {
				add(e)
			}
		default:
			add(v)
		}
	}
	l := &refLoad{targets: map[string]*node{}}
	if len(ids) > 0 {
		c := callFrom(ctx)
		found, err := getMany(ctx, c, typ, ids)
		if err != nil {
			l.err = err
		} else {
			recs := make([]*store.Record, 0, len(found))
			for _, id := range ids {
				if r, ok := found[id]; ok && r.Trashed == nil && visible(ctx, c, r) {
					recs = append(recs, shown(ctx, c, r))
				}
			}
			for _, n := range newBatches(recs) {
				l.targets[n.rec.ID] = n
			}
		}
	}
	if b.refs == nil {
		b.refs = map[string]*refLoad{}
	}
	b.refs[field] = l
	return l.targets, l.err
}
