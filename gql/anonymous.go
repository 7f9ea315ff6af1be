package gql

import (
	"github.com/graphql-go/graphql/language/ast"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/tenant"
)

// checkAnonymous decides, before anything runs, whether a caller without a
// token may run an operation. login and loginByEmail are always open (a
// login that needed a token would be useless); createAccount is open
// where the instance allows anonymous registration; where it allows
// anonymous requests, so are the fields the schema marks @public,
// introspection (where the setting introspection is "anyone" too:
// introspection.go) and the record operations (which then reach only what
// grants to anonymous allow: authz.go). Everything else answers 401.
func checkAnonymous(m *schema.Model, doc *ast.Document, opName string, inst *tenant.Instance) error {
	op := operation(doc, opName)
	if op == nil {
		return nil // execution reports the missing operation
	}
	roots := m.Queries
	if op.Operation == ast.OperationTypeMutation {
		roots = m.Mutations
	}
	if denied := deniedRoot(doc, op, func(name string) bool { return anonymousField(name, roots, inst) }); denied != "" {
		return errcode.New(errcode.Unauthenticated, "authorization required: %s needs a token in the authorization header", denied)
	}
	return nil
}

// onlyLogins reports whether an operation runs only login and
// loginByEmail: those ignore the authorization header, so that a client
// sending a stale token can log in again.
func onlyLogins(doc *ast.Document, opName string) bool {
	op := operation(doc, opName)
	return op != nil && deniedRoot(doc, op, func(name string) bool { return name == "login" || name == "loginByEmail" }) == ""
}

// deniedRoot returns the first root field of op (through fragments) that
// allowed refuses, or "" when it allows them all.
func deniedRoot(doc *ast.Document, op *ast.OperationDefinition, allowed func(name string) bool) string {
	for _, f := range selectedRoots(doc, op) {
		if !allowed(f.Name.Value) {
			return f.Name.Value
		}
	}
	return ""
}

// selectedRoots returns the root fields op selects, in order, through its
// inline fragments and fragment spreads (nested at most 8 deep).
func selectedRoots(doc *ast.Document, op *ast.OperationDefinition) []*ast.Field {
	var fields []*ast.Field
	frags := fragments(doc)
	var walk func(set *ast.SelectionSet, depth int)
	walk = func(set *ast.SelectionSet, depth int) {
		if set == nil || depth > 8 {
			return
		}
		for _, sel := range set.Selections {
			switch sel := sel.(type) {
			case *ast.Field:
				fields = append(fields, sel)
			case *ast.InlineFragment:
				walk(sel.SelectionSet, depth+1)
			case *ast.FragmentSpread:
				if f, ok := frags[sel.Name.Value]; ok {
					walk(f.SelectionSet, depth+1)
				}
			}
		}
	}
	walk(op.SelectionSet, 0)
	return fields
}

// anonymousField reports whether an anonymous caller may call a root field.
func anonymousField(name string, roots []*schema.Field, inst *tenant.Instance) bool {
	switch name {
	case "login", "loginByEmail", "__typename", "resetPassword", "verifyEmail":
		return true
	case "requestPasswordReset", "requestEmailVerification":
		return inst.Settings.AnonymousRequests
	case "createAccount":
		return inst.Settings.AnonymousRegistration
	case "__schema", "__type", "get", "find", "subscribe", "upsert", "delete", "trash", "untrash", "link", "unlink", "math", "deleteScalars":
		// Records: what grants to anonymous allow, nothing else.
		return inst.Settings.AnonymousRequests
	}
	if !inst.Settings.AnonymousRequests {
		return false
	}
	for _, f := range roots {
		if f.Name == name {
			return f.Public
		}
	}
	return false
}

// operation returns the operation a request runs, or nil.
func operation(doc *ast.Document, name string) *ast.OperationDefinition {
	var found *ast.OperationDefinition
	for _, d := range doc.Definitions {
		op, ok := d.(*ast.OperationDefinition)
		if !ok {
			continue
		}
		if name == "" {
			if found != nil {
				return nil // several operations and no name: execution says so
			}
			found = op
		} else if op.Name != nil && op.Name.Value == name {
			return op
		}
	}
	return found
}

// fragments returns the fragment definitions of a document by name.
func fragments(doc *ast.Document) map[string]*ast.FragmentDefinition {
	out := map[string]*ast.FragmentDefinition{}
	for _, d := range doc.Definitions {
		if f, ok := d.(*ast.FragmentDefinition); ok {
			out[f.Name.Value] = f
		}
	}
	return out
}
