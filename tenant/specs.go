package tenant

import (
	"fmt"
	"slices"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// Specs returns what a store must maintain for the record types of m (the
// application's and the built-in ones): @unique fields, @indices sets and
// every reference field, so that reverse lookups do not scan. @access
// rules add theirs: core.createdBy on a type with rules (a user session's
// scope of it is "its own records OR what the rule allows", which a store
// reads as the union of index lookups rather than a scan), and every field
// a rule compares with = in a type its path reaches (board.core.createdBy
// = $caller indexes Board's core.createdBy), so that a rule's hops cost
// index lookups.
func Specs(m *schema.Model) []store.TypeSpec {
	extra := map[string][]string{}
	note := func(typ, field string) {
		if !slices.Contains(extra[typ], field) {
			extra[typ] = append(extra[typ], field)
		}
	}
	for _, t := range m.Types {
		for _, op := range schema.RuleOps {
			if r := t.Rules[op]; r != nil {
				note(t.Name, "core.createdBy")
				ruleFields(t.Name, r.Filter, note)
			}
		}
	}
	specs := make([]store.TypeSpec, 0, len(m.Types))
	for _, t := range m.Types {
		s := store.TypeSpec{Name: t.Name}
		for _, f := range t.Fields {
			if f.Unique {
				s.Unique = append(s.Unique, f.Name)
			}
			if f.Kind == schema.KindRef {
				s.Refs = append(s.Refs, f.Name)
			}
		}
		for _, set := range t.Indices {
			s.Indices = append(s.Indices, slices.Clone(set))
		}
		for _, f := range extra[t.Name] {
			if f == "core.id" || slices.Contains(s.Refs, f) || slices.ContainsFunc(s.Indices, func(set []string) bool { return len(set) == 1 && set[0] == f }) {
				continue
			}
			s.Indices = append(s.Indices, []string{f})
		}
		specs = append(specs, s)
	}
	return specs
}

// Accepts reports whether a release's schema accepts a stored record (an
// import's): its type is a record type of m and each of its fields a field
// of that type. It does not check the values: the store keeps what it is
// given, and a field whose kind changed reads as the schema says.
func Accepts(m *schema.Model, r *store.Record) error {
	t, ok := m.Type(r.Type)
	if !ok {
		return fmt.Errorf("record %s: the release has no record type %s", r.ID, r.Type)
	}
	for name := range r.Fields {
		if _, ok := t.Field(name); !ok {
			return fmt.Errorf("record %s: type %s of the release has no field %s", r.ID, r.Type, name)
		}
	}
	return nil
}

// ruleFields notes the fields a bound rule of typ compares with = (one
// part: a field of the type or its metadata), in typ and in every type its
// hops reach.
func ruleFields(typ string, e arcql.Expr, note func(typ, field string)) {
	switch n := e.(type) {
	case *arcql.And:
		for _, t := range n.Terms {
			ruleFields(typ, t, note)
		}
	case *arcql.Or:
		for _, t := range n.Terms {
			ruleFields(typ, t, note)
		}
	case *arcql.Not:
		ruleFields(typ, n.X, note)
	case *arcql.Hop:
		ruleFields(n.Target, n.Sub, note)
	case *arcql.Compare:
		if n.Op == arcql.OpEq && len(n.Path.Parts) == 1 {
			note(typ, n.Path.Parts[0])
		}
	}
}
