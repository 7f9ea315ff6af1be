package rest

import (
	"strings"
	"unicode/utf8"

	"github.com/corehq/core/errcode"
)

// rewriteUpsert rewrites POST and PUT / into upsert. The body is
// {"values": {<Type>: [<record>, …] or <record>, …}}; records carry their
// ids in core.id and nest referenced records.
func rewriteUpsert(a *API, r Request) (Plan, error) {
	if err := noQuery(r); err != nil {
		return Plan{}, err
	}
	if r.Body == nil {
		return Plan{}, errcode.New(errcode.BadRequest, `the body is required: {"values": {"<Type>": [<record>, …]}}`)
	}
	var unknown []string
	for k := range r.Body {
		if k != "values" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return Plan{}, unknownNames("body field", unknown, []string{"values"})
	}
	values, ok := r.Body["values"].(map[string]any)
	if !ok {
		return Plan{}, errcode.New(errcode.BadRequest, `body field values is required and must be an object of records by type: {"values": {"<Type>": [<record>, …]}}`)
	}
	for typ := range values {
		if err := checkType(a, typ); err != nil {
			return Plan{}, err
		}
	}
	f, err := builtin(a, rootMutation, "upsert")
	if err != nil {
		return Plan{}, err
	}
	// The body is {"values": values}, nothing else: the variables as they
	// are.
	return plan(f, r.Body, "", ShapeData), nil
}

// rewriteFind rewrites GET /{aggregate} into find. The query string holds
// find's arguments but type; arcql defaults to * (every record, a page at
// a time).
func rewriteFind(a *API, r Request) (Plan, error) {
	f, vars, err := typeArgs(a, r, rootQuery, "find")
	if err != nil {
		return Plan{}, err
	}
	if _, ok := vars["arcql"]; !ok {
		vars["arcql"] = "*"
	}
	return plan(f, vars, r.Aggregate, ShapeData), nil
}

// rewriteGetRecord rewrites GET /{aggregate}/{identifier} into a find of
// that id (the answer is a page, as the service description shows);
// includeTrashed is the one parameter it takes.
func rewriteGetRecord(a *API, r Request) (Plan, error) {
	f, vars, err := typeArgs(a, r, rootQuery, "find", "first", "after", "last", "before", "page")
	if err != nil {
		return Plan{}, err
	}
	p := plan(f, vars, r.Aggregate, ShapeRecord)
	p.Type, p.ID = r.Aggregate, r.ID
	return p, nil
}

// rewriteDelete rewrites DELETE /{aggregate} into delete. arcql is
// required and must not be blank: deleting every record says so with
// arcql=*.
func rewriteDelete(a *API, r Request) (Plan, error) {
	f, vars, err := typeArgs(a, r, rootMutation, "delete")
	if err != nil {
		return Plan{}, err
	}
	if text, _ := vars["arcql"].(string); strings.TrimSpace(text) == "" {
		return Plan{}, errcode.New(errcode.BadRequest, "parameter arcql is required: it selects the records to delete (arcql=* deletes every %s)", r.Aggregate)
	}
	vars["type"] = r.Aggregate
	return plan(f, vars, "", ShapeData), nil
}

// rewriteDeleteRecord rewrites DELETE /{aggregate}/{identifier} into a
// delete of that id; clearArrayReferences is the one parameter it takes.
func rewriteDeleteRecord(a *API, r Request) (Plan, error) {
	f, vars, err := typeArgs(a, r, rootMutation, "delete")
	if err != nil {
		return Plan{}, err
	}
	return plan(f, vars, "", ShapeData), nil
}

// typeArgs is where the routes on a record type begin: the type must
// exist (and on /{aggregate}/{identifier} the identifier be text); the
// query string holds the arguments of the built-in root field but type,
// which the path gives, and the route's fixed ones; on the record route
// arcql, which selects the record, is fixed too.
func typeArgs(a *API, r Request, root, name string, fixed ...string) (*rootField, map[string]any, error) {
	if err := checkType(a, r.Aggregate); err != nil {
		return nil, nil, err
	}
	record := r.Route == RouteRecord
	// On the stack: the longest list, the record route's, has seven.
	var buf [8]string
	fixed = append(append(buf[:0], "type"), fixed...)
	if record {
		if err := checkID(r.ID); err != nil {
			return nil, nil, err
		}
		fixed = append(fixed, "arcql")
	}
	f, err := builtin(a, root, name)
	if err != nil {
		return nil, nil, err
	}
	vars, err := queryArgs(f, r.Query, fixed...)
	if err != nil {
		return nil, nil, err
	}
	vars["type"] = r.Aggregate
	if record {
		vars["arcql"] = recordFilter(r.ID)
	}
	return f, vars, nil
}

// checkID fails for an identifier that is no text.
func checkID(id string) error {
	if id == "" || !utf8.ValidString(id) {
		return errcode.New(errcode.BadRequest, "the record identifier in the path must be non-empty UTF-8 text")
	}
	return nil
}
