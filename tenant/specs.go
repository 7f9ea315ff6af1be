package tenant

import (
	"fmt"
	"slices"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// Specs returns what a store must maintain for the record types of m (the
// application's and the built-in ones): @unique fields, @indices sets and
// every reference field, so that reverse lookups do not scan.
func Specs(m *schema.Model) []store.TypeSpec {
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
