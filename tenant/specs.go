package tenant

import (
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
