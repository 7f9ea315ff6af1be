package gql

import "github.com/graphql-go/graphql/language/ast"

// What a door asks of a request's document before it runs it: which
// transport its operation needs (IsSubscription), whether GET may run it
// (IsMutation), and whether Run would refuse it outright (Env.Rejects).
// Each reads the schema's document cache, so the document is parsed and
// validated once for the asking and the running.

// IsSubscription reports whether the operation a request runs is a
// subscription (false when the document does not parse or validate: it
// then runs as a query and answers its errors).
func IsSubscription(s *Schema, req Request) bool {
	d := s.document(req.Query)
	if d.ast == nil {
		return false
	}
	op := operation(d.ast, req.OperationName)
	return op != nil && op.Operation == ast.OperationTypeSubscription
}

// IsMutation reports whether the operation a request runs is a mutation:
// the one operationName names, or the document's first (false when the
// document does not parse or validate).
func IsMutation(s *Schema, req Request) bool {
	d := s.document(req.Query)
	if d.ast == nil {
		return false
	}
	for _, def := range d.ast.Definitions {
		op, ok := def.(*ast.OperationDefinition)
		if !ok {
			continue
		}
		if req.OperationName == "" || (op.Name != nil && op.Name.Value == req.OperationName) {
			return op.Operation == ast.OperationTypeMutation
		}
	}
	return false
}

// Rejects reports whether Run answers req in env with errors alone for
// its document: it does not parse or validate, or it selects the schema
// (__schema, __type) and env's caller may not introspect it. A transport
// that carries such errors in a message of its own (a WebSocket's error)
// asks first, then lets Run word them as it words them over HTTP.
func (env Env) Rejects(req Request) bool {
	d := env.Schema.document(req.Query)
	return len(d.errors) > 0 || (d.introspects && !env.mayIntrospect())
}
