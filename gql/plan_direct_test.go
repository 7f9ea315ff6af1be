package gql

import (
	"testing"

	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/schema"
)

// TestDirectFields checks which fields the builder registers as direct:
// a record's stored fields, its `core` and the metadata, not references
// (they read the store) nor root fields.
func TestDirectFields(t *testing.T) {
	sdl := testfiles.Read(t, "e2e", "bookstore.graphql")
	m, err := schema.Parse(sdl, schema.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(m, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Book.title", "Book.price", "Book.tags", "Book.meta", "Book.core", "Core.id", "CoreResultEdge.cursor", "Core.created", "Core.instance"} {
		if s.direct[f] == nil {
			t.Errorf("%s is not direct", f)
		}
	}
	for _, f := range []string{"Author.booklist", "Author.bestbook", "Query.find", "Query.get", "PageInfo.nextOffsets"} {
		if s.direct[f] != nil {
			t.Errorf("%s is direct; it must run its resolver", f)
		}
	}
}
