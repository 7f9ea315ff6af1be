package schema

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store/arcql"
)

func TestModelField(t *testing.T) {
	t.Parallel()
	sdl, err := os.ReadFile(filepath.Join(testdataDir, "features.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(string(sdl)+`
type Author { name: String age: Int rating: Float active: Boolean bestbook: Book booklist: [Book!] }`, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		typ, name string
		want      arcql.Field
		ok        bool
	}{
		{"Author", "name", arcql.Field{Kind: arcql.FieldString}, true},
		{"Author", "age", arcql.Field{Kind: arcql.FieldInt}, true},
		{"Author", "rating", arcql.Field{Kind: arcql.FieldFloat}, true},
		{"Author", "active", arcql.Field{Kind: arcql.FieldBoolean}, true},
		{"Author", "bestbook", arcql.Field{Kind: arcql.FieldRef, Target: "Book"}, true},
		{"Author", "booklist", arcql.Field{Kind: arcql.FieldRef, Target: "Book", List: true}, true},
		{"Book", "isbn", arcql.Field{Kind: arcql.FieldID}, true},
		{"Order", "status", arcql.Field{Kind: arcql.FieldEnum}, true},
		{"Order", "placed", arcql.Field{Kind: arcql.FieldTime}, true},
		{"Order", "total", arcql.Field{Kind: arcql.FieldString}, true}, // custom scalar
		{"Order", "extra", arcql.Field{Kind: arcql.FieldJSON}, true},
		{"Order", "tags", arcql.Field{Kind: arcql.FieldString, List: true}, true},
		{"Order", "customer", arcql.Field{Kind: arcql.FieldRef, Target: "Account"}, true},
		{"Order", "callback", arcql.Field{Kind: arcql.FieldObject, Target: "GraphQLRef"}, true},
		{"Account", "emails", arcql.Field{Kind: arcql.FieldString, List: true}, true}, // Email
		{"Account", "password", arcql.Field{Kind: arcql.FieldString, Hidden: true}, true},
		{"Webhook", "query", arcql.Field{Kind: arcql.FieldObject, Target: "GraphQLRef"}, true},
		{"Webhook", "as", arcql.Field{Kind: arcql.FieldRef, Target: "Account"}, true},
		{"GraphQLRef", "type", arcql.Field{Kind: arcql.FieldEnum}, true},
		{"GraphQLRef", "field", arcql.Field{Kind: arcql.FieldString}, true},
		{"WebhookResponse", "headers", arcql.Field{Kind: arcql.FieldJSON}, true},
		{"Book", "core.id", arcql.Field{Kind: arcql.FieldID}, true},
		{"Book", "core.created", arcql.Field{Kind: arcql.FieldTime}, true},
		{"Book", "core.updated", arcql.Field{Kind: arcql.FieldTime}, true},
		{"Book", "core.trashed", arcql.Field{Kind: arcql.FieldTime}, true},
		{"Book", "core.createdBy", arcql.Field{Kind: arcql.FieldID}, true},
		{"Account", "core.instanceId", arcql.Field{Kind: arcql.FieldID}, true},
		{"Book", "core.app", arcql.Field{}, false},
		{"Book", "core", arcql.Field{}, false},
		{"Book", "missing", arcql.Field{}, false},
		{"GraphQLRef", "core.id", arcql.Field{}, false}, // embedded objects have no metadata
		{"Nope", "core.id", arcql.Field{}, false},
		{"OrderFilter", "status", arcql.Field{}, false}, // inputs are not records
		{"Query", "orders", arcql.Field{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"."+tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := m.Field(tt.typ, tt.name)
			if ok != tt.ok {
				t.Fatalf("Field(%q, %q) ok = %v, want %v", tt.typ, tt.name, ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Field(%q, %q) (-want +got):\n%s", tt.typ, tt.name, diff)
			}
		})
	}
}
