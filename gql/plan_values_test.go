package gql

import (
	"reflect"
	"testing"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"
)

// bookInput is an upsert's input the shape the REST create sends: an
// object of lists of objects of scalars.
func bookInput() (graphql.Input, map[string]any) {
	book := graphql.NewInputObject(graphql.InputObjectConfig{Name: "BookInput", Fields: graphql.InputObjectConfigFieldMap{
		"title":    {Type: graphql.String},
		"authorid": {Type: graphql.Int},
		"price":    {Type: graphql.Float},
	}})
	values := graphql.NewInputObject(graphql.InputObjectConfig{Name: "Values", Fields: graphql.InputObjectConfigFieldMap{
		"Book":   {Type: graphql.NewList(graphql.NewNonNull(book))},
		"Author": {Type: graphql.NewList(graphql.NewNonNull(book))},
	}})
	in := map[string]any{"Book": []any{map[string]any{"title": "bench book 1", "authorid": 17, "price": 42.5}}}
	return graphql.NewNonNull(values), in
}

// TestValidInputMessages: the fast check of an input object that fits
// and the worded check of one that does not agree with each other.
func TestValidInputMessages(t *testing.T) {
	typ, good := bookInput()
	if ok, msgs := validInput(good, typ); !ok || len(msgs) != 0 {
		t.Fatalf("valid input: got %v %q", ok, msgs)
	}
	bad := map[string]any{"Book": []any{map[string]any{"title": 3, "pages": 10, "price": "x"}}, "Shelf": 1}
	ok, msgs := validInput(bad, typ)
	want := []string{
		`In field "Shelf": Unknown field.`,
		`In field "Book": In element #1: In field "pages": Unknown field.`,
		`In field "Book": In element #2: In field "price": Expected type "Float", found "x".`,
	}
	if ok || !reflect.DeepEqual(msgs, want) {
		t.Fatalf("invalid input: got %v\n%q\nwant\n%q", ok, msgs, want)
	}
}

func BenchmarkCoerceUpsertVariables(b *testing.B) {
	typ, in := bookInput()
	vars := []*varPlan{{name: "values", def: &ast.VariableDefinition{}, typ: typ}}
	inputs := map[string]any{"values": in}
	for b.Loop() {
		if _, err := coerceVariables(vars, inputs); err != nil {
			b.Fatal(err)
		}
	}
}
