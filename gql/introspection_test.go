package gql

import (
	"testing"

	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"
)

// introspects finds __schema and __type at any depth of any definition,
// and only them.
func TestIntrospects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{`{ __schema { types { name } } }`, true},
		{`{ t: __type(name: "X") { name } }`, true},
		{`{ ... on Query { ... { __schema { queryType { name } } } } }`, true},
		{`query { ...F } fragment F on Query { __type(name: "X") { name } }`, true},
		{`query A { __typename } query B { __schema { queryType { name } } }`, true},
		{`{ find { edges { node { __schema } } } }`, true},
		{`{ __typename find { __typename } }`, false},
		{`{ schema type }`, false},
		{`mutation { upsert(values: {__schema: 1}) { id } }`, false},
	} {
		doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(tc.doc)})})
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if got := introspects(doc); got != tc.want {
			t.Errorf("introspects(%s) = %v, want %v", tc.doc, got, tc.want)
		}
	}
}
