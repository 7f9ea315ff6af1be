package rest

import (
	"slices"
	"strings"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/schema"
)

// coreFields are the metadata fields of every record, in the order of
// DESIGN.md; fields the Core type has beyond them follow, sorted.
var coreFields = []string{"id", "created", "updated", "trashed", "createdBy", "impl", "app", "release",
	"instance", "publisherRealm", "publisherApp", "publisherRelease", "instanceId"}

// selector generates the selections REST answers with, from the schema's
// types (DESIGN.md "REST interface"): every scalar, enum and Json field;
// `core` with all the metadata; embedded objects with their fields;
// reference fields expanded one level (their own fields and core, not
// their references); a union as one inline fragment per member.
type selector struct {
	model *schema.Model
}

func newSelector(m *schema.Model) *selector { return &selector{model: m} }

// of returns the selection set of a field of type t, "" for a scalar or
// enum. narrow, when set, keeps only that member of a union.
func (g *selector) of(t graphql.Type, narrow string) string {
	return g.sel(named(t), narrow, map[string]bool{})
}

func (g *selector) sel(t graphql.Type, narrow string, seen map[string]bool) string {
	switch t := t.(type) {
	case *graphql.Union:
		var b strings.Builder
		b.WriteString("{")
		members := slices.Clone(t.Types())
		slices.SortFunc(members, func(x, y *graphql.Object) int { return strings.Compare(x.Name(), y.Name()) })
		for _, m := range members {
			if narrow != "" && m.Name() != narrow {
				continue
			}
			b.WriteString(" ... on ")
			b.WriteString(m.Name())
			b.WriteString(" ")
			b.WriteString(g.sel(m, narrow, seen))
		}
		b.WriteString(" }")
		return b.String()
	case *graphql.Object:
		if rt, ok := g.model.Type(t.Name()); ok {
			return g.record(rt, t, 0)
		}
		if seen[t.Name()] {
			return "{ __typename }" // a cycle of non-record objects: stop
		}
		seen[t.Name()] = true
		defer delete(seen, t.Name())
		var b strings.Builder
		b.WriteString("{")
		for _, name := range fieldOrder(t) {
			fd := t.Fields()[name]
			if needsArgs(fd) {
				continue
			}
			b.WriteString(" ")
			b.WriteString(name)
			if sub := g.sel(named(fd.Type), narrow, seen); sub != "" {
				b.WriteString(" ")
				b.WriteString(sub)
			}
		}
		b.WriteString(" }")
		return b.String()
	}
	return ""
}

// record returns the selection of a record type: core, its fields in
// schema order and, at level 0, its references expanded as level-1
// records (which leave their own references out).
func (g *selector) record(t *schema.Type, obj *graphql.Object, level int) string {
	fields := obj.Fields()
	var b strings.Builder
	b.WriteString("{ core ")
	b.WriteString(g.sel(named(fields["core"].Type), "", map[string]bool{}))
	for _, f := range t.Fields {
		fd, ok := fields[f.Name]
		if !ok || needsArgs(fd) { // hidden fields are not in the output type
			continue
		}
		switch f.Kind {
		case schema.KindRef:
			if level > 0 {
				continue
			}
			if _, iface := named(fd.Type).(*graphql.Interface); iface {
				// A reference typed by an interface: the record's id and
				// its implementing type.
				b.WriteString(" " + f.Name + " { core { id impl } }")
				continue
			}
			target, ok := named(fd.Type).(*graphql.Object)
			rt, isRecord := g.model.Type(f.Type)
			if !ok || !isRecord {
				continue
			}
			b.WriteString(" ")
			b.WriteString(f.Name)
			b.WriteString(" ")
			b.WriteString(g.record(rt, target, level+1))
		default:
			b.WriteString(" ")
			b.WriteString(f.Name)
			if sub := g.sel(named(fd.Type), "", map[string]bool{}); sub != "" {
				b.WriteString(" ")
				b.WriteString(sub)
			}
		}
	}
	b.WriteString(" }")
	return b.String()
}

// fieldOrder returns the field names of a non-record object: Core's in
// the documented order, any other's sorted.
func fieldOrder(t *graphql.Object) []string {
	fields := t.Fields()
	var names []string
	if t.Name() == "Core" {
		for _, n := range coreFields {
			if _, ok := fields[n]; ok {
				names = append(names, n)
			}
		}
	}
	var rest []string
	for n := range fields {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// needsArgs reports whether a field cannot be selected without
// arguments.
func needsArgs(fd *graphql.FieldDefinition) bool {
	for _, a := range fd.Args {
		if _, nonNull := a.Type.(*graphql.NonNull); nonNull && a.DefaultValue == nil {
			return true
		}
	}
	return false
}
