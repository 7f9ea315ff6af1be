package gql_test

import (
	"net/url"
	"strings"
	"testing"
)

// introspectionQuery is the query GraphiQL and Apollo tools send to load a
// schema.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}`

func TestIntrospection(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	d := c.data(introspectionQuery, nil)
	names := map[string]bool{}
	for _, typ := range path(d, "__schema", "types").([]any) {
		names[path(typ, "name").(string)] = true
	}
	for _, want := range []string{"Author", "Book", "URL", "Account", "Webhook", "Core", "CoreMutationType", "CoreRootAggregate",
		"CoreUpsertInputUnion", "CoreFilterConnection", "CoreResultEdge", "PageInfo", "AuthorInput", "Json", "DateTime"} {
		if !names[want] {
			t.Errorf("introspection lacks type %s", want)
		}
	}
	if path(d, "__schema", "mutationType", "name") != "Mutation" {
		t.Errorf("mutationType = %v", path(d, "__schema", "mutationType"))
	}
}

func TestGraphQLOverGET(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Book": map[string]any{"core": map[string]any{"id": "b"}, "title": "By GET"}}})
	headers := map[string]string{"core-domain": c.domain, "authorization": c.token}
	q := url.Values{"query": {`query($id: String!) { get(type: Book, id: $id) { ... on Book { title } } }`}, "variables": {`{"id":"b"}`}}
	status, body := c.env.Do("GET", "/graphql?"+q.Encode(), headers, nil)
	if status != 200 || path(body, "data", "get", "title") != "By GET" {
		t.Errorf("GET query: %d %s", status, dump(body))
	}
	q = url.Values{"query": {`mutation { trash(type: Book, arcql: "*") }`}}
	status, body = c.env.Do("GET", "/graphql?"+q.Encode(), headers, nil)
	if status != 400 || !strings.Contains(dump(body), "POST") {
		t.Errorf("GET mutation: %d %s, want 400 asking for POST", status, dump(body))
	}
}

func TestUniqueViolation(t *testing.T) {
	t.Parallel()
	c := newBookstore(t)
	c.data(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": "u1"}, "username": "ada"}}})
	_, msg, code := c.fail(upsertDoc, map[string]any{"v": map[string]any{"Account": map[string]any{"core": map[string]any{"id": "u2"}, "username": "ada"}}})
	if code != "CONFLICT" || !strings.Contains(msg, "Account.username") || !strings.Contains(msg, "ada") {
		t.Errorf("duplicate username: %s %q, want CONFLICT naming Account.username and ada", code, msg)
	}
	if got := c.names("Account", "username = 'ada'"); len(got) != 1 {
		t.Errorf("accounts named ada: %d, want 1", len(got))
	}
}
