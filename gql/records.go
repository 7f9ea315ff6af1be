package gql

import (
	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// recordObject returns the output type of a record type: `core` and its
// own fields (hidden ones left out). References resolve through the
// node's batch.
func (b *builder) recordObject(t *schema.Type) *graphql.Object {
	return graphql.NewObject(graphql.ObjectConfig{
		Name:        t.Name,
		Description: t.Description,
		Interfaces: graphql.InterfacesThunk(func() []*graphql.Interface {
			out := make([]*graphql.Interface, len(t.Interfaces))
			for i, name := range t.Interfaces {
				out[i] = b.ifaces[name]
			}
			return out
		}),
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			fields := graphql.Fields{"core": b.coreField()}
			b.direct.add(t.Name, "core", func(_ *call, src any) (any, bool) {
				n, ok := src.(*node)
				if !ok {
					return nil, false
				}
				return &n.core, true
			})
			for _, f := range t.Fields {
				if f.Hidden {
					continue
				}
				fields[f.Name] = b.recordField(t.Name, f)
			}
			return fields
		}),
	})
}

// coreField returns the field core of a record type (and of an
// interface): the record's metadata.
func (b *builder) coreField() *graphql.Field {
	return &graphql.Field{
		Type:        graphql.NewNonNull(b.core),
		Description: "The record's metadata.",
		Resolve: func(p graphql.ResolveParams) (any, error) {
			return &p.Source.(*node).core, nil
		},
	}
}

// interfaceType returns the output type of an interface: core and its
// fields, typed as the implementing record types type them (the resolvers
// that run are the concrete type's). A value is a record, whose type names
// the implementation.
func (b *builder) interfaceType(in *schema.Interface) *graphql.Interface {
	return graphql.NewInterface(graphql.InterfaceConfig{
		Name:        in.Name,
		Description: in.Description,
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			fields := graphql.Fields{"core": b.coreField()}
			for _, f := range in.Fields {
				fields[f.Name] = b.recordField(in.Name, f)
			}
			return fields
		}),
		ResolveType: func(p graphql.ResolveTypeParams) *graphql.Object {
			if n, ok := p.Value.(*node); ok {
				return b.objects[n.rec.Type]
			}
			return nil
		},
	})
}

// recordField returns the output field of a record's field.
func (b *builder) recordField(typ string, f *schema.Field) *graphql.Field {
	name := f.Name
	out := &graphql.Field{
		Type:        wrap(b.named(f.Type), f.List, false, f.ElemNonNull),
		Description: f.Description,
	}
	switch {
	case f.Kind == schema.KindRef && f.List:
		out.Args = graphql.FieldConfigArgument{
			"arcql": &graphql.ArgumentConfig{Type: graphql.String, Description: "Keep only the referenced records this filter matches."},
			"first": &graphql.ArgumentConfig{Type: graphql.Int, Description: "At most this many records."},
			"after": &graphql.ArgumentConfig{Type: graphql.String, Description: "Only the records after the one with this id."},
		}
		target := f.Type
		out.Resolve = func(p graphql.ResolveParams) (any, error) {
			n := p.Source.(*node)
			targets, err := n.batch.ref(p.Context, name, target)
			if err != nil {
				return nil, err
			}
			return listRefs(p, n.rec.Fields[name], targets, target)
		}
	case f.Kind == schema.KindRef:
		target := f.Type
		out.Resolve = func(p graphql.ResolveParams) (any, error) {
			n := p.Source.(*node)
			id, ok := n.rec.Fields[name].(string)
			if !ok {
				return nil, nil
			}
			targets, err := n.batch.ref(p.Context, name, target)
			if err != nil {
				return nil, err
			}
			if t, ok := targets[id]; ok {
				return t, nil
			}
			return nil, nil
		}
	default:
		out.Resolve = func(p graphql.ResolveParams) (any, error) {
			return p.Source.(*node).rec.Fields[name], nil
		}
		b.direct.add(typ, name, func(_ *call, src any) (any, bool) {
			n, ok := src.(*node)
			if !ok {
				return nil, false
			}
			return n.rec.Fields[name], true
		})
	}
	return out
}

// listRefs resolves a list reference field: the referenced records in
// list order, filtered and paged by the field's arguments.
func listRefs(p graphql.ResolveParams, ids any, targets map[string]*node, typ string) (any, error) {
	list, _ := ids.([]any)
	var filter arcql.Expr
	if text, ok := p.Args["arcql"].(string); ok && text != "" {
		c := callFrom(p.Context)
		q, err := bindFilter(p.Context, c, typ, text)
		if err != nil {
			return nil, err
		}
		if len(q.Sort) > 0 {
			return nil, errcode.New(errcode.BadFilter, "arcql: SORT is not available on a list field; its order is the list's")
		}
		filter, err = store.ResolveHops(p.Context, c.Store, c.Instance.ID, q.Filter, c.schema.cfg.MaxHopResults)
		if err != nil {
			return nil, storeError(err)
		}
	}
	after, _ := p.Args["after"].(string)
	first, hasFirst := p.Args["first"].(int)
	if hasFirst && first < 0 {
		return nil, errcode.New(errcode.BadRequest, "first must not be negative")
	}
	out := []any{}
	skipping := after != ""
	for _, v := range list {
		id, _ := v.(string)
		if skipping {
			skipping = id != after
			continue
		}
		n, ok := targets[id]
		if !ok || (filter != nil && !arcql.Match(filter, n.rec)) {
			continue
		}
		if hasFirst && len(out) >= first {
			break
		}
		out = append(out, n)
	}
	return out, nil
}

// embeddedObject returns the output type of an embedded object type; its
// values are JSON objects inside a record.
func (b *builder) embeddedObject(t *schema.Type) *graphql.Object {
	return graphql.NewObject(graphql.ObjectConfig{
		Name:        t.Name,
		Description: t.Description,
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			fields := graphql.Fields{}
			for _, f := range t.Fields {
				name := f.Name
				fields[name] = &graphql.Field{
					Type:        wrap(b.named(f.Type), f.List, false, f.ElemNonNull),
					Description: f.Description,
					Resolve: func(p graphql.ResolveParams) (any, error) {
						m, _ := p.Source.(map[string]any)
						return m[name], nil
					},
				}
			}
			return fields
		}),
	})
}
