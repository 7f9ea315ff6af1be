package gql

import (
	"context"
	"github.com/graphql-go/graphql"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// meta is the source of a Core object: a record's metadata. hideCreated
// is set in upsert results for a record that already existed.
type meta struct {
	rec         *store.Record
	hideCreated bool
}

// newCoreObject returns the Core type: the metadata of every record.
func newCoreObject(direct directFields) *graphql.Object {
	fields := graphql.Fields{}
	// field is a String field's resolver; str adds the direct read of the
	// same value (id and the timestamps have direct reads of their own).
	field := func(name string, get func(c *call, m *meta) any) {
		fields[name] = &graphql.Field{Type: graphql.String, Resolve: func(p graphql.ResolveParams) (any, error) {
			m, _ := p.Source.(*meta)
			if m == nil {
				return nil, nil
			}
			return get(callFrom(p.Context), m), nil
		}}
	}
	// A string's getter points at the string (nil: null), which the
	// direct read passes on as it is: boxing the string would allocate.
	str := func(name string, get func(c *call, m *meta) *string) {
		field(name, func(c *call, m *meta) any {
			if s := get(c, m); s != nil {
				return *s
			}
			return nil
		})
		direct.add("Core", name, func(c *call, src any) (any, bool) {
			m, _ := src.(*meta)
			if m == nil || c == nil {
				return nil, false
			}
			if s := get(c, m); s != nil {
				return s, true
			}
			return nil, true
		})
	}
	publisher := func(get func(r *tenant.Release) *string) func(c *call, m *meta) *string {
		return func(c *call, m *meta) *string {
			t, ok := c.schema.model.Type(m.rec.Type)
			return get(c.publisher(ok && t.Builtin))
		}
	}
	field("id", func(_ *call, m *meta) any { return m.rec.ID })
	// The id's direct read is a pointer into the record (boxing the
	// string would allocate); the executor appends it as a string.
	direct.add("Core", "id", func(_ *call, src any) (any, bool) {
		m, _ := src.(*meta)
		if m == nil {
			return nil, false
		}
		return &m.rec.ID, true
	})
	// A timestamp's direct read is a pointer into the record (boxing it
	// allocates nothing); the executor appends it with appendTime.
	stamp := func(name string, get func(m *meta) *time.Time) {
		field(name, func(_ *call, m *meta) any {
			if t := get(m); t != nil {
				return formatTime(*t)
			}
			return nil
		})
		direct.add("Core", name, func(_ *call, src any) (any, bool) {
			m, _ := src.(*meta)
			if m == nil {
				return nil, false
			}
			if t := get(m); t != nil {
				return t, true
			}
			return nil, true
		})
	}
	stamp("created", func(m *meta) *time.Time {
		if m.hideCreated {
			return nil
		}
		return &m.rec.Created
	})
	stamp("updated", func(m *meta) *time.Time { return &m.rec.Updated })
	stamp("trashed", func(m *meta) *time.Time { return m.rec.Trashed })
	str("createdBy", func(_ *call, m *meta) *string { return nonEmpty(&m.rec.CreatedBy) })
	str("impl", func(c *call, m *meta) *string {
		// As Hypi's: the implementing type of a record whose type
		// implements an interface, unless core.impl was written.
		if t, ok := c.schema.model.Type(m.rec.Type); ok && m.rec.Impl == "" && len(t.Interfaces) > 0 {
			return &m.rec.Type
		}
		return nonEmpty(&m.rec.Impl)
	})
	str("app", func(c *call, _ *meta) *string { return &c.Instance.App })
	str("release", func(c *call, _ *meta) *string { return &c.Release.Name })
	str("instance", func(c *call, _ *meta) *string { return &c.Instance.Domain })
	str("publisherRealm", publisher(func(r *tenant.Release) *string { return &r.Realm }))
	str("publisherApp", publisher(func(r *tenant.Release) *string { return &r.App }))
	str("publisherRelease", publisher(func(r *tenant.Release) *string { return &r.Name }))
	str("instanceId", func(c *call, _ *meta) *string { return &c.Instance.ID })
	return graphql.NewObject(graphql.ObjectConfig{
		Name:        "Core",
		Description: "The metadata of a record.",
		Fields:      fields,
	})
}

// nonEmpty is s, or nil (null) when *s is "".
func nonEmpty(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}

// nullable turns "" into null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// newPageInfoObject returns PageInfo; its fields ask the page lazily, so a
// document that selects no offsets pays for none.
func newPageInfoObject() *graphql.Object {
	field := func(t graphql.Output, get func(ctx context.Context, pg *page) (any, error)) *graphql.Field {
		return &graphql.Field{Type: t, Resolve: func(p graphql.ResolveParams) (any, error) {
			return get(p.Context, p.Source.(*page))
		}}
	}
	strings := graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(graphql.String)))
	return graphql.NewObject(graphql.ObjectConfig{
		Name: "PageInfo",
		Fields: graphql.Fields{
			"hasPreviousPage": field(graphql.NewNonNull(graphql.Boolean), func(ctx context.Context, pg *page) (any, error) { return pg.hasPrevious(ctx), nil }),
			"hasNextPage":     field(graphql.NewNonNull(graphql.Boolean), func(ctx context.Context, pg *page) (any, error) { return pg.hasNext(ctx), nil }),
			"startCursor":     field(graphql.NewNonNull(graphql.String), func(ctx context.Context, pg *page) (any, error) { return boxCursor(pg.startCursor(ctx)), nil }),
			"endCursor":       field(graphql.NewNonNull(graphql.String), func(ctx context.Context, pg *page) (any, error) { return boxCursor(pg.endCursor(ctx)), nil }),
			"pageLimit":       field(graphql.NewNonNull(graphql.Int), func(_ context.Context, pg *page) (any, error) { return pg.limit, nil }),
			"previousOffsets": field(strings, func(ctx context.Context, pg *page) (any, error) { return boxOffsets(pg.previousOffsets(ctx)) }),
			"nextOffsets":     field(strings, func(ctx context.Context, pg *page) (any, error) { return boxOffsets(pg.nextOffsets(ctx)) }),
		},
	})
}

// boxCursor returns a cursor as a resolver's value. Most pages have no
// page before or after them, and FIRST and LAST box without allocating,
// being constants; a record's id allocates.
func boxCursor(s string) any {
	switch s {
	case cursorFirst:
		return cursorFirst
	case cursorLast:
		return cursorLast
	}
	return s
}

// noOffsets is the empty list of offsets, boxed once: most pages have no
// page before or after them. It is never written.
var noOffsets any = []string{}

// boxOffsets returns offsets as a resolver's value.
func boxOffsets(offsets []string, err error) (any, error) {
	if err == nil && len(offsets) == 0 {
		return noOffsets, nil
	}
	return offsets, err
}

// edge is the source of a CoreResultEdge.
type edge struct{ n *node }

// newConnectionObject returns CoreFilterConnection and its edge type.
func newConnectionObject(direct directFields, union *graphql.Union, pageInfo *graphql.Object) *graphql.Object {
	direct.add("CoreResultEdge", "cursor", func(_ *call, src any) (any, bool) {
		e, ok := src.(edge)
		if !ok {
			return nil, false
		}
		return &e.n.rec.ID, true
	})
	edgeType := graphql.NewObject(graphql.ObjectConfig{
		Name: "CoreResultEdge",
		Fields: graphql.Fields{
			"cursor": &graphql.Field{Type: graphql.NewNonNull(graphql.ID), Resolve: func(p graphql.ResolveParams) (any, error) {
				return p.Source.(edge).n.rec.ID, nil
			}},
			"node": &graphql.Field{Type: graphql.NewNonNull(union), Resolve: func(p graphql.ResolveParams) (any, error) {
				return p.Source.(edge).n, nil
			}},
		},
	})
	return graphql.NewObject(graphql.ObjectConfig{
		Name:        "CoreFilterConnection",
		Description: "A page of records.",
		Fields: graphql.Fields{
			"edges": &graphql.Field{Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(edgeType))), Resolve: func(p graphql.ResolveParams) (any, error) {
				pg := p.Source.(*page)
				out := make([]any, len(pg.nodes))
				for i, n := range pg.nodes {
					out[i] = edge{n}
				}
				return out, nil
			}},
			"pageInfo": &graphql.Field{Type: graphql.NewNonNull(pageInfo), Resolve: func(p graphql.ResolveParams) (any, error) {
				return p.Source, nil
			}},
		},
	})
}
