package rest

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/store/arcql"
)

// Route is a route of /rest/v1, as the rewrite tells them apart.
type Route int

const (
	// RouteRecords is `/`: POST and PUT upsert the records of the body.
	RouteRecords Route = iota + 1
	// RouteType is `/{aggregate}`: GET finds records, DELETE deletes the
	// records a filter selects.
	RouteType
	// RouteRecord is `/{aggregate}/{identifier}`: GET reads one record,
	// DELETE deletes it.
	RouteRecord
	// RouteFn is `/fn/{root}/{fn}`: any Query or Mutation field, its
	// arguments in the query string (GET) or the body (POST, PUT).
	RouteFn
	// RouteLogin is `/login`: POST logs in by username or by e-mail.
	RouteLogin
	// RouteAggregate is `/aggregate/{aggregate}`: GET aggregates the
	// records of the type.
	RouteAggregate
)

// Request is a REST request as the rewrite sees it: method, route, path
// parameters, query string and decoded body; no headers, no context.
type Request struct {
	Method string
	Route  Route
	// Aggregate and ID are the path's {aggregate} and {identifier}.
	Aggregate, ID string
	// Root and Fn are the path's {root} and {fn}.
	Root, Fn string
	Query    url.Values
	// Body is the JSON object a POST or PUT carried; nil when it carried
	// none.
	Body map[string]any
}

// Shape says how the GraphQL answer of a plan becomes the HTTP answer,
// beyond the rule every plan follows: the status of the first error's
// code, else 200.
type Shape int

const (
	// ShapeData: the rule alone.
	ShapeData Shape = iota
	// ShapeRecord: a page that holds no record is 404 NOT_FOUND.
	ShapeRecord
	// ShapeLogin: an AccessToken with an errorCode is 401, same body.
	ShapeLogin
)

// Plan is a REST request rewritten: the GraphQL request to run and how to
// answer with its result.
type Plan struct {
	GraphQL gql.Request
	// Field is the root field under which the answer's data holds the
	// result.
	Field string
	Shape Shape
	// Type and ID name the record a ShapeRecord plan reads.
	Type, ID string
}

// Rewrite turns a REST request into a GraphQL request on a's schema. It is
// a pure function: no clock, no I/O, no state. Request values reach the
// plan only as variables; the document text depends only on the route,
// the record type and which arguments are present, so it is the same text
// for every request of that kind and is served from the document cache.
// Failures are coded errors (*errcode.Error) naming the problem.
func Rewrite(a *API, r Request) (Plan, error) {
	switch {
	case r.Route == RouteRecords && (r.Method == http.MethodPost || r.Method == http.MethodPut):
		return rewriteUpsert(a, r)
	case r.Route == RouteType && r.Method == http.MethodGet:
		return rewriteFind(a, r)
	case r.Route == RouteType && r.Method == http.MethodDelete:
		return rewriteDelete(a, r)
	case r.Route == RouteRecord && r.Method == http.MethodGet:
		return rewriteGetRecord(a, r)
	case r.Route == RouteRecord && r.Method == http.MethodDelete:
		return rewriteDeleteRecord(a, r)
	case r.Route == RouteFn && (r.Method == http.MethodGet || r.Method == http.MethodPost || r.Method == http.MethodPut):
		return rewriteFn(a, r)
	case r.Route == RouteLogin && r.Method == http.MethodPost:
		return rewriteLogin(a, r)
	case r.Route == RouteAggregate && r.Method == http.MethodGet:
		return rewriteAggregate(a, r)
	}
	return Plan{}, errcode.New(errcode.MethodNotAllowed, "method %s is not allowed on this path", r.Method)
}

// plan returns the plan that calls f with vars, the arguments given by
// name; narrow names the record type a `type` argument selects, if any.
func plan(f *rootField, vars map[string]any, narrow string, shape Shape) Plan {
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	slices.Sort(names)
	if f.token {
		shape = ShapeLogin
	}
	return Plan{GraphQL: gql.Request{Query: document(f, names, narrow), Variables: vars}, Field: f.name, Shape: shape}
}

// document returns the GraphQL text that calls f with the arguments named
// (sorted, each one an argument of f), each passed as the variable of its
// name, and selects the result as the REST answer does. The text depends
// on nothing else.
func document(f *rootField, names []string, narrow string) string {
	var b strings.Builder
	b.Grow(64 + len(f.selFor(narrow)))
	b.WriteString(f.root)
	if len(names) > 0 {
		b.WriteString("(")
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			a, _ := f.arg(n) // the caller checked every name
			b.WriteString("$")
			b.WriteString(n)
			b.WriteString(": ")
			b.WriteString(a.typeName)
		}
		b.WriteString(")")
	}
	b.WriteString(" { ")
	b.WriteString(f.name)
	if len(names) > 0 {
		b.WriteString("(")
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
			b.WriteString(": $")
			b.WriteString(n)
		}
		b.WriteString(")")
	}
	if sel := f.selFor(narrow); sel != "" {
		b.WriteString(" ")
		b.WriteString(sel)
	}
	b.WriteString(" }")
	return b.String()
}

// builtin returns a built-in root field the REST routes rest on.
func builtin(a *API, root, name string) (*rootField, error) {
	f, ok := a.field(root, name)
	if !ok {
		return nil, errcode.New(errcode.Internal, "internal error: the schema has no %s %s", root, name)
	}
	return f, nil
}

// checkType fails with UNKNOWN_TYPE unless name is a record type.
func checkType(a *API, name string) error {
	if !a.isType(name) {
		return errcode.New(errcode.UnknownType, "unknown record type %s: this schema has no such type", quoteShort(name))
	}
	return nil
}

// queryArgs coerces the query string into arguments of f. Parameters in
// fixed are set by the route and may not be given; any parameter that is
// not an argument is BAD_REQUEST naming it (all of them) and saying what
// the route takes.
func queryArgs(f *rootField, q url.Values, fixed ...string) (map[string]any, error) {
	vars := make(map[string]any, len(q)+len(fixed))
	var unknown []string
	for name, vals := range q {
		a, ok := f.arg(name)
		if !ok || slices.Contains(fixed, name) {
			unknown = append(unknown, name)
			continue
		}
		v, err := coerce(name, vals, a.typ)
		if err != nil {
			return nil, err
		}
		vars[name] = v
	}
	if len(unknown) > 0 {
		return nil, unknownNames("parameter", unknown, allowed(f, fixed))
	}
	return vars, nil
}

// allowed returns the argument names of f not in fixed.
func allowed(f *rootField, fixed []string) []string {
	var out []string
	for _, a := range f.args {
		if !slices.Contains(fixed, a.name) {
			out = append(out, a.name)
		}
	}
	return out
}

// unknownNames is the BAD_REQUEST error for parameters or body fields the
// route does not take.
func unknownNames(what string, names, allowed []string) error {
	slices.Sort(names)
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = quoteShort(n)
	}
	s := ""
	if len(names) > 1 {
		s = "s"
	}
	takes := "no " + what + "s"
	if len(allowed) > 0 {
		takes = strings.Join(allowed, ", ")
	}
	return errcode.New(errcode.BadRequest, "unknown %s%s %s; this route takes %s", what, s, strings.Join(quoted, ", "), takes)
}

// requireArgs fails naming the first required argument of f (not in
// fixed) that vars lacks.
func requireArgs(f *rootField, vars map[string]any, what string) error {
	for _, a := range f.args {
		if _, ok := vars[a.name]; a.required && !ok {
			return errcode.New(errcode.BadRequest, "%s %s is required (%s)", what, a.name, a.typeName)
		}
	}
	return nil
}

// noQuery fails when a route that takes its input in the body got a
// query string.
func noQuery(r Request) error {
	if len(r.Query) == 0 {
		return nil
	}
	names := make([]string, 0, len(r.Query))
	for n := range r.Query {
		names = append(names, n)
	}
	return unknownNames("parameter", names, nil)
}

// recordFilter is the ArcQL filter that selects one record by id. The id
// is quoted as an ArcQL string and travels as the value of a variable.
func recordFilter(id string) string { return "core.id = " + arcql.Quote(id) }
