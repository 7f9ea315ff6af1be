package tenant_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

func TestSpecs(t *testing.T) {
	t.Parallel()
	m, err := schema.Parse(`
type Author { name: String @unique age: Int bestbook: Book booklist: [Book!] }
type Book @indices(sets: [["price"], ["authorid", "price"]]) { title: String isbn: String @unique authorid: Int price: Float }
type Shelf { label: String }`, schema.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.TypeSpec{}
	for _, s := range tenant.Specs(m) {
		got[s.Name] = s
	}
	for _, want := range []store.TypeSpec{
		{Name: "Author", Unique: []string{"name"}, Refs: []string{"bestbook", "booklist"}},
		{Name: "Book", Unique: []string{"isbn"}, Indices: [][]string{{"price"}, {"authorid", "price"}}},
		{Name: "Shelf"},
	} {
		if diff := cmp.Diff(want, got[want.Name]); diff != "" {
			t.Errorf("spec of %s (-want +got):\n%s", want.Name, diff)
		}
	}
	// The built-in record types are declared too (their indexes and
	// references are the schema package's business).
	for _, name := range []string{"Account", "Webhook", "URL"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no spec for the built-in type %s", name)
		}
	}
	if len(got) != len(m.Types) {
		t.Errorf("%d specs for %d record types", len(got), len(m.Types))
	}
}
