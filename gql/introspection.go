package gql

import (
	"regexp"
	"strings"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/tenant"
)

// Introspection is for whom the instance's setting introspection names:
// the instance token by default (the console, the developer's tools),
// account sessions or anyone where the setting says so. The others may
// not select __schema or __type anywhere in a document, and the errors
// they are answered carry neither graphql-go's suggestions ("Did you mean
// …?") nor the names of the schema's types their document did not write
// (hideSchema): both would map the schema a field name at a time.

// mayIntrospect reports whether env's caller may introspect the schema.
func (env Env) mayIntrospect() bool {
	if env.Principal.Kind == auth.InstanceAdmin {
		return true
	}
	if env.Instance == nil {
		return false
	}
	switch env.Instance.Settings.Introspection {
	case tenant.IntrospectionAccounts:
		return env.Principal.Kind == auth.User
	case tenant.IntrospectionAnyone:
		return true
	}
	return false
}

// introspectionRefused is the answer to a caller who may not introspect
// and sent a document that does: UNAUTHENTICATED for an anonymous caller
// (a token may help), FORBIDDEN for an account's session.
func introspectionRefused(env Env) error {
	setting := ""
	if env.Instance != nil {
		setting = env.Instance.Settings.Introspection
	}
	who := "the instance token only"
	switch setting {
	case "":
		setting = tenant.IntrospectionAdmin
	case tenant.IntrospectionAccounts:
		who = "the instance token and account sessions"
	}
	if env.Principal.Kind == auth.Anonymous {
		return errcode.New(errcode.Unauthenticated,
			"introspection (__schema, __type) needs a token: this instance allows it to %s (its setting introspection is %q)", who, setting)
	}
	return errcode.New(errcode.Forbidden,
		"introspection (__schema, __type) is refused: this instance allows it to %s (its setting introspection is %q)", who, setting)
}

// introspects reports whether a document selects __schema or __type
// anywhere: in any operation or fragment, at any depth, inside inline
// fragments. Every definition is looked at, used or not, so that what the
// document would run does not matter. Its depth is bounded by the guard
// (guard.go) before it is parsed; the walk keeps its own stack anyway.
func introspects(doc *ast.Document) bool {
	var stack []*ast.SelectionSet
	for _, d := range doc.Definitions {
		switch d := d.(type) {
		case *ast.OperationDefinition:
			stack = append(stack, d.SelectionSet)
		case *ast.FragmentDefinition:
			stack = append(stack, d.SelectionSet)
		}
	}
	for len(stack) > 0 {
		set := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if set == nil {
			continue
		}
		for _, sel := range set.Selections {
			switch sel := sel.(type) {
			case *ast.Field:
				if sel.Name != nil && (sel.Name.Value == "__schema" || sel.Name.Value == "__type") {
					return true
				}
				stack = append(stack, sel.SelectionSet)
			case *ast.InlineFragment:
				stack = append(stack, sel.SelectionSet)
			}
		}
	}
	return false
}

// publicTypes are the type names errors may always carry: GraphQL's own
// scalars and root types, and the service's documented scalars.
var publicTypes = map[string]bool{
	"String": true, "Int": true, "Float": true, "Boolean": true, "ID": true,
	"Query": true, "Mutation": true, "Subscription": true,
	"Json": true, "Any": true, "UUID": true, "Long": true, "DateTime": true, "Email": true, "EmailInput": true,
}

var (
	// suggestion matches graphql-go's hints: "Did you mean …?" (fields,
	// arguments, types, inline fragments) and "Perhaps you meant to use
	// type …." (a variable's default value).
	suggestion = regexp.MustCompile(`\s*(?:Did you mean [^?]*\?|Perhaps you meant to use type "[^"]*"\.)`)
	// typeRef matches a type in graphql-go's messages: `type "X"` or
	// `Expected "X"` (X possibly wrapped: "[X!]!").
	typeRef = regexp.MustCompile(`\btype "([^"]*)"|\bExpected "([^"]*)"`)
	// nameToken matches a GraphQL name.
	nameToken = regexp.MustCompile(`[_A-Za-z][_0-9A-Za-z]*`)
)

// hideSchema rewrites the request-level errors (those without a path:
// the document's validation, the variables' coercion) for a caller who
// may not introspect. It drops graphql-go's suggestions, and replaces
// the name of each of the schema's types the message names by what kind
// of type it is ("an input object type"), unless the caller's own
// document names that type or it is one of publicTypes: a caller learns
// nothing of the schema it did not write. Coded errors of resolvers
// (which have a path) are the service's own words and are left alone.
func (s *Schema) hideSchema(res *Result, query string) {
	var written map[string]bool
	for i := range res.Errors {
		e := &res.Errors[i]
		if len(e.Path) > 0 || !strings.Contains(e.Message, `"`) {
			continue
		}
		msg := suggestion.ReplaceAllString(e.Message, "")
		msg = typeRef.ReplaceAllStringFunc(msg, func(m string) string {
			sub := typeRef.FindStringSubmatch(m)
			ref, prefix := sub[1], ""
			if ref == "" {
				ref, prefix = sub[2], "Expected "
			}
			name := strings.Trim(ref, "[]!")
			if publicTypes[name] {
				return m
			}
			t := s.gql.Type(name)
			if t == nil {
				return m // not a type of the schema: the caller's own text
			}
			if written == nil {
				written = map[string]bool{}
				for _, n := range nameToken.FindAllString(query, -1) {
					written[n] = true
				}
			}
			if written[name] {
				return m
			}
			return prefix + typeKind(t)
		})
		e.Message = msg
	}
}

// typeKind says what kind of type t is, without its name.
func typeKind(t graphql.Type) string {
	switch t.(type) {
	case *graphql.Object:
		return "an object type"
	case *graphql.InputObject:
		return "an input object type"
	case *graphql.Enum:
		return "an enum type"
	case *graphql.Interface:
		return "an interface type"
	case *graphql.Union:
		return "a union type"
	case *graphql.Scalar:
		return "a scalar type"
	}
	return "a type"
}
