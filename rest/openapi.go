package rest

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/graphql-go/graphql"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/gql"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/tenant"
)

// obj is a JSON object of the OpenAPI document; encoding/json writes its
// keys sorted, so the document is the same bytes for the same schema.
type obj = map[string]any

// OpenAPI returns the OpenAPI 3.1 document of the REST interface of the
// schema: every route, with the schema's record types, inputs and enums
// as JSON Schemas that describe exactly what the routes take and answer.
// rel names the release (the document's title and version). It is built
// once per schema.
func (a *API) OpenAPI(rel *tenant.Release) ([]byte, error) {
	a.openapiOnce.Do(func() {
		doc := newOpenAPI(a, rel).document()
		b, err := json.Marshal(doc)
		if err != nil {
			a.openapi = nil
			return
		}
		a.openapi = b
	})
	if a.openapi == nil {
		return nil, errcode.New(errcode.Internal, "internal error")
	}
	return a.openapi, nil
}

// openAPI builds one document; schemas holds the component schemas made
// so far, by name.
type openAPI struct {
	a       *API
	rel     *tenant.Release
	schemas obj
}

func newOpenAPI(a *API, rel *tenant.Release) *openAPI {
	return &openAPI{a: a, rel: rel, schemas: obj{}}
}

func (o *openAPI) document() obj {
	paths := obj{}
	add := func(path, method string, op obj) {
		item, _ := paths[path].(obj)
		if item == nil {
			item = obj{}
			paths[path] = item
		}
		item[method] = op
	}
	if upsert, ok := o.a.field(rootMutation, "upsert"); ok {
		for _, method := range []string{"post", "put"} {
			add("/", method, o.upsertOp(upsert, method))
		}
	}
	if login, ok := o.a.field(rootQuery, "login"); ok {
		add("/login", "post", o.loginOp(login))
	}
	add("/openapi.json", "get", op("openapi", "This document.", nil, nil,
		obj{"200": response("The OpenAPI document of this instance's REST interface.", obj{"type": "object"})}))
	if find, ok := o.a.field(rootQuery, "find"); ok {
		for _, t := range o.a.model.Types {
			o.recordRoutes(find, t.Name, add)
		}
	}
	if agg, ok := o.a.field(rootQuery, "aggregate"); ok {
		for _, t := range o.a.model.Types {
			o.aggregateRoute(agg, t.Name, add)
		}
	}
	for _, root := range []string{rootQuery, rootMutation} {
		names := make([]string, 0, len(o.a.roots[root]))
		for n := range o.a.roots[root] {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			f := o.a.roots[root][n]
			path := "/fn/" + root + "/" + n
			if root == rootQuery {
				add(path, "get", o.fnGetOp(f))
			}
			add(path, "post", o.fnBodyOp(f, "post"))
			add(path, "put", o.fnBodyOp(f, "put"))
		}
	}
	o.schemas["CoreErrors"] = obj{
		"type":        "object",
		"description": "The answer of a failed request.",
		"required":    []string{"errors"},
		"properties": obj{"errors": obj{"type": "array", "minItems": 1, "items": obj{
			"type":     "object",
			"required": []string{"message", "extensions"},
			"properties": obj{
				"message": obj{"type": "string"},
				"path":    obj{"type": "array", "items": obj{"type": []string{"string", "integer"}}},
				"extensions": obj{
					"type":     "object",
					"required": []string{"code"},
					"properties": obj{
						"code":       obj{"type": "string", "enum": errorCodes()},
						"retryAfter": obj{"type": "integer", "description": "Seconds to wait, with RATE_LIMITED."},
					},
				},
			},
		}}},
	}
	title := "Core REST interface"
	version := "unknown"
	if o.rel != nil {
		title = o.rel.App + " — Core REST interface"
		version = o.rel.Name
	}
	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   title,
			"version": version,
			"description": "The REST interface of an instance: every request is rewritten into the instance's GraphQL API and run there. " +
				"Responses are {\"data\": …} or, on failure, {\"errors\": [{\"message\", \"extensions\": {\"code\"}}]} with the status of the code.",
		},
		"servers":  []obj{{"url": "/rest/v1"}},
		"security": []obj{{"token": []string{}}},
		"paths":    paths,
		"components": obj{
			"securitySchemes": obj{"token": obj{
				"type": "apiKey", "in": "header", "name": "authorization",
				"description": "The instance token or a session token from login, bare or as `Bearer <token>`.",
			}},
			"parameters": obj{"domain": obj{
				"name": "core-domain", "in": "header", "required": true,
				"description": "The domain of the instance.",
				"schema":      obj{"type": "string"},
			}},
			"responses": obj{"Error": obj{
				"description": "The request failed; extensions.code says why.",
				"content":     obj{"application/json": obj{"schema": ref("CoreErrors")}},
			}},
			"schemas": o.schemas,
		},
	}
}

// errorCodes lists the codes a client may see.
func errorCodes() []string {
	return []string{string(errcode.BadRequest), string(errcode.BadFilter), string(errcode.Unauthenticated), string(errcode.Forbidden),
		string(errcode.NotFound), string(errcode.UnknownType), string(errcode.UnknownDomain), string(errcode.Referenced),
		string(errcode.Conflict), string(errcode.TooLarge), string(errcode.RateLimited), string(errcode.Unavailable), string(errcode.Internal)}
}

// op is an operation; params and body may be nil. Every operation names
// its instance with core-domain and answers failures with the errors
// envelope.
func op(id, summary string, params []obj, body obj, responses obj) obj {
	ps := []obj{{"$ref": "#/components/parameters/domain"}}
	ps = append(ps, params...)
	responses["default"] = obj{"$ref": "#/components/responses/Error"}
	out := obj{"operationId": id, "summary": summary, "parameters": ps, "responses": responses}
	if body != nil {
		out["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": body}}}
	}
	return out
}

// response is a JSON answer.
func response(desc string, schema obj) obj {
	return obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
}

// dataOf is the success envelope {"data": {field: schema}}.
func dataOf(field string, schema obj) obj {
	return obj{
		"type":     "object",
		"required": []string{"data"},
		"properties": obj{"data": obj{
			"type":       "object",
			"required":   []string{field},
			"properties": obj{field: schema},
		}},
	}
}

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func nullable(s obj) obj { return obj{"anyOf": []obj{s, {"type": "null"}}} }

// param is a query or path parameter.
func param(name, in, desc string, required bool, schema obj) obj {
	p := obj{"name": name, "in": in, "schema": schema, "required": required}
	if desc != "" {
		p["description"] = desc
	}
	if _, isArray := schema["items"]; isArray && in == "query" {
		p["style"], p["explode"] = "form", true
	}
	return p
}

func (o *openAPI) upsertOp(f *rootField, method string) obj {
	summary := "Create or update records (upsert): records carry their id in core.id and nest referenced records."
	if method == "put" {
		summary = "Update records (upsert); created is null for a record that existed."
	}
	body := obj{
		"type":                 "object",
		"required":             []string{"values"},
		"additionalProperties": false,
		"properties":           obj{"values": o.inputRef("CoreUpsertInputUnion")},
	}
	return op(method+"_records", summary, nil, body, obj{
		"200": response("One metadata record per top-level record of the body.", dataOf("upsert", o.out(f.out, 0))),
	})
}

func (o *openAPI) loginOp(login *rootField) obj {
	pw := obj{"type": "string"}
	body := obj{"oneOf": []obj{
		{"type": "object", "title": "by username", "required": []string{"username", "password"}, "additionalProperties": false,
			"properties": obj{"username": obj{"type": "string"}, "password": pw}},
		{"type": "object", "title": "by e-mail", "required": []string{"email", "password"}, "additionalProperties": false,
			"properties": obj{"email": obj{"type": "string"}, "password": pw}},
	}}
	token := o.out(login.out, 0)
	answer := obj{"oneOf": []obj{dataOf("login", token), dataOf("loginByEmail", token)}}
	out := op("login", "Log in by username (login) or by e-mail (loginByEmail); the answer holds a session token.", nil, body, obj{
		"200": response("Logged in: sessionToken and sessionExpires (Unix seconds).", answer),
		"401": response("Not logged in: errorCode and errorMsg say why.", answer),
	})
	out["security"] = []obj{{}, {"token": []string{}}}
	return out
}

// recordRoutes adds /{T} and /{T}/{id} for a record type.
func (o *openAPI) recordRoutes(find *rootField, t string, add func(path, method string, op obj)) {
	page := o.page(t)
	var findParams []obj
	for _, a := range find.args {
		if a.name == "type" {
			continue
		}
		desc := a.desc
		if a.name == "arcql" {
			desc = "The ArcQL filter; default * (every record)."
		}
		findParams = append(findParams, param(a.name, "query", desc, false, o.input(a.typ)))
	}
	add("/"+t, "get", op("find_"+t, "Find "+t+" records: a page of the records the filter selects.", findParams, nil, obj{
		"200": response("A page of "+t+" records.", dataOf("find", page)),
	}))
	clear := param("clearArrayReferences", "query", "Remove the list references to the records first; without it a referenced record is not deleted (409 REFERENCED).",
		false, obj{"type": "boolean"})
	count := obj{"type": "integer", "minimum": 0, "description": "The number of records deleted."}
	add("/"+t, "delete", op("delete_"+t+"_filter", "Delete the "+t+" records a filter selects (arcql=* selects all).", []obj{
		param("arcql", "query", "The ArcQL filter; required.", true, obj{"type": "string", "minLength": 1}), clear,
	}, nil, obj{
		"200": response("The number of records deleted.", dataOf("delete", count)),
		"409": obj{"$ref": "#/components/responses/Error"},
	}))
	id := param("id", "path", "The record's id (core.id).", true, obj{"type": "string"})
	add("/"+t+"/{id}", "get", op("get_"+t, "Read one "+t+" record, its references expanded one level.", []obj{
		id, param("includeTrashed", "query", "Read the record even if it is trashed.", false, obj{"type": "boolean"}),
	}, nil, obj{
		"200": response("A page holding the record.", dataOf("find", page)),
		"404": obj{"$ref": "#/components/responses/Error"},
	}))
	add("/"+t+"/{id}", "delete", op("delete_"+t, "Delete one "+t+" record.", []obj{id, clear}, nil, obj{
		"200": response("The number of records deleted (0 or 1).", dataOf("delete", count)),
		"409": obj{"$ref": "#/components/responses/Error"},
	}))
}

// aggregateRoute adds /aggregate/{T} for a record type: its parameters
// are the arguments of the type's With field plus distinct, its answer
// one <T>Aggs object, or a list of them with groupBy.
func (o *openAPI) aggregateRoute(agg *rootField, t string, add func(path, method string, op obj)) {
	fields := named(agg.out).(*graphql.Object).Fields()
	name := gql.AggregateField(t)
	with := fields[name+"With"]
	if with == nil {
		return
	}
	args := slices.Clone(with.Args) // graphql-go's order is a map's
	slices.SortFunc(args, func(x, y *graphql.Argument) int { return strings.Compare(x.PrivateName, y.PrivateName) })
	params := []obj{param("distinct", "query", "Also answer countDistinct, sumDistinct and avgDistinct.", false, obj{"type": "boolean"})}
	for _, a := range args {
		if a.PrivateName != "groupBy" {
			params = append(params, param(a.PrivateName, "query", a.Description(), false, o.input(a.Type)))
			continue
		}
		p := param("groupBy", "query", "A key to group by, repeatable: field[:ASC|DESC][:UNIT], UNIT one of SECONDS, MINUTES, HOURS, DAYS, MONTHS, YEARS (for DateTime fields).",
			false, obj{"type": "array", "items": obj{"type": "string"}})
		p["allowReserved"] = true
		params = append(params, p)
	}
	aggs := named(with.Type).(*graphql.Object)
	o.object(aggs)
	for _, n := range fieldOrder(aggs) {
		sub, ok := named(aggs.Fields()[n].Type).(*graphql.Object)
		if !ok {
			continue
		}
		o.object(sub)
		props := o.schemas[sub.Name()].(obj)["properties"].(obj)
		for _, fn := range fieldOrder(sub) {
			if fd := sub.Fields()[fn]; len(fd.Args) == 1 && fd.Args[0].PrivateName == "distinct" {
				props[fn+"Distinct"] = props[fn]
			}
		}
	}
	answer := obj{"type": "object", "required": []string{name}, "additionalProperties": false, "properties": obj{
		name: obj{"anyOf": []obj{ref(aggs.Name()), {"type": "array", "items": ref(aggs.Name())}}},
	}}
	add("/aggregate/"+t, "get", op("aggregate_"+t,
		"Aggregate the "+t+" records a filter selects (those the caller may read): counts, sums, averages, extremes; with groupBy, one object per group.",
		params, nil, obj{"200": response("The aggregates: one object, or one per group with groupBy.", dataOf("aggregate", answer))}))
}

// page defines T.Page: a page of T records as find answers it for /{T}
// and /{T}/{id}.
func (o *openAPI) page(t string) obj {
	name := t + ".Page"
	if _, ok := o.schemas[name]; ok {
		return ref(name)
	}
	o.schemas[name] = obj{}
	pageInfo := obj{}
	if pi, ok := o.a.types["PageInfo"].(*graphql.Object); ok {
		pageInfo = o.object(pi)
	}
	o.schemas[name] = obj{
		"type":                 "object",
		"description":          "A page of " + t + " records.",
		"required":             []string{"edges", "pageInfo"},
		"additionalProperties": false,
		"properties": obj{
			"edges": obj{"type": "array", "items": obj{
				"type":                 "object",
				"required":             []string{"cursor", "node"},
				"additionalProperties": false,
				"properties": obj{
					"cursor": obj{"type": "string", "description": "The record's id."},
					"node":   o.record(t, 0),
				},
			}},
			"pageInfo": pageInfo,
		},
	}
	return ref(name)
}

func (o *openAPI) fnGetOp(f *rootField) obj {
	var params []obj
	for _, a := range f.args {
		params = append(params, param(a.name, "query", a.desc, a.required, o.input(a.typ)))
	}
	if loginFields[f.name] {
		params = append(params, param("type", "query", "Sent by some clients; must be query.", false, obj{"type": "string", "enum": []string{"query"}}))
	}
	return o.fnSecurity(f, op(f.root+"_"+f.name+"_get", fnSummary(f), params, nil, o.fnResponses(f)))
}

// fnSecurity makes the token optional on the operations of a login.
func (o *openAPI) fnSecurity(f *rootField, op obj) obj {
	if f.token {
		op["security"] = []obj{{}, {"token": []string{}}}
	}
	return op
}

func (o *openAPI) fnBodyOp(f *rootField, method string) obj {
	props := obj{}
	var required []string
	for _, a := range f.args {
		props[a.name] = o.input(a.typ)
		if a.desc != "" {
			props[a.name] = withDescription(props[a.name].(obj), a.desc)
		}
		if a.required {
			required = append(required, a.name)
		}
	}
	body := obj{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		body["required"] = required
	}
	out := o.fnSecurity(f, op(f.root+"_"+f.name+"_"+method, fnSummary(f), nil, nil, o.fnResponses(f)))
	// Without required arguments the body may be left out.
	out["requestBody"] = obj{"required": len(required) > 0, "content": obj{"application/json": obj{"schema": body}}}
	return out
}

func fnSummary(f *rootField) string {
	s := "Call " + f.root + " " + f.name + "."
	if f.desc != "" {
		s += " " + f.desc
	}
	return s
}

func (o *openAPI) fnResponses(f *rootField) obj {
	out := obj{"200": response("The function's result.", dataOf(f.name, o.out(f.out, 0)))}
	if f.token {
		out["401"] = response("Not logged in: errorCode and errorMsg say why.", dataOf(f.name, o.out(f.out, 0)))
	}
	return out
}

// out returns the JSON Schema of a value of output type t as the REST
// selection selects it (see selector): a record at level 0 expands its
// references as level-1 records.
func (o *openAPI) out(t graphql.Type, level int) obj {
	nn, isNonNull := t.(*graphql.NonNull)
	if isNonNull {
		t = nn.OfType
	}
	var s obj
	switch t := t.(type) {
	case *graphql.List:
		s = obj{"type": "array", "items": o.out(t.OfType, level)}
	case *graphql.Scalar:
		s = scalarSchema(t.Name())
	case *graphql.Enum:
		s = o.enum(t)
	case *graphql.Union:
		members := slices.Clone(t.Types())
		slices.SortFunc(members, func(x, y *graphql.Object) int { return strings.Compare(x.Name(), y.Name()) })
		var alts []obj
		for _, m := range members {
			alts = append(alts, o.out(m, level))
		}
		s = obj{"anyOf": alts}
	case *graphql.Object:
		if _, ok := o.a.model.Type(t.Name()); ok {
			s = o.record(t.Name(), level)
		} else {
			s = o.object(t)
		}
	default:
		s = obj{}
	}
	if isNonNull {
		return s
	}
	return orNull(s)
}

// orNull lets a schema also be null.
func orNull(s obj) obj {
	if typ, ok := s["type"].(string); ok && s["enum"] == nil {
		c := obj{}
		for k, v := range s {
			c[k] = v
		}
		c["type"] = []string{typ, "null"}
		return c
	}
	if len(s) == 0 {
		return s // any value, null included
	}
	return nullable(s)
}

// scalarSchema is the JSON Schema of a scalar.
func scalarSchema(name string) obj {
	switch name {
	case "String", "ID":
		return obj{"type": "string"}
	case "Int":
		return obj{"type": "integer", "format": "int32"}
	case "Float":
		return obj{"type": "number"}
	case "Boolean":
		return obj{"type": "boolean"}
	case "DateTime":
		return obj{"type": "string", "format": "date-time"}
	case "UUID":
		return obj{"type": "string", "format": "uuid"}
	case "Long":
		return obj{"anyOf": []any{obj{"type": "integer", "format": "int64"}, obj{"type": "string", "pattern": "^-?[0-9]{1,19}$"}}}
	case "EmailInput":
		address := obj{"type": "string", "format": "email"}
		return obj{"anyOf": []any{address, obj{"type": "object", "required": []string{"value"}, "additionalProperties": false,
			"properties": obj{"value": address}}}}
	}
	return obj{} // Json and the schema's own scalars: any JSON value
}

// enum defines an enum's schema.
func (o *openAPI) enum(e *graphql.Enum) obj {
	if _, ok := o.schemas[e.Name()]; !ok {
		var values []string
		for _, v := range e.Values() {
			values = append(values, v.Name)
		}
		slices.Sort(values)
		o.schemas[e.Name()] = obj{"type": "string", "enum": values}
	}
	return ref(e.Name())
}

// record defines the schema of a record type at a level: T for a record
// at the top of an answer, T.Reference for one reached through a
// reference (no references of its own).
func (o *openAPI) record(name string, level int) obj {
	key := name
	if level > 0 {
		key = name + ".Reference"
	}
	if _, ok := o.schemas[key]; ok {
		return ref(key)
	}
	t, isRecord := o.a.model.Type(name)
	gt, isObject := o.a.types[name].(*graphql.Object)
	if !isRecord || !isObject {
		return obj{}
	}
	o.schemas[key] = obj{} // a placeholder against cycles
	props := obj{"core": o.out(gt.Fields()["core"].Type, level)}
	required := []string{"core"}
	for _, f := range t.Fields {
		fd, ok := gt.Fields()[f.Name]
		if !ok || needsArgs(fd) {
			continue
		}
		if f.Kind == schema.KindRef {
			if level > 0 {
				continue
			}
			props[f.Name] = o.out(fd.Type, level+1)
		} else {
			props[f.Name] = o.out(fd.Type, level)
		}
		if f.Description != "" {
			props[f.Name] = withDescription(props[f.Name].(obj), f.Description)
		}
		required = append(required, f.Name)
	}
	desc := t.Description
	if level > 0 {
		desc = strings.TrimSpace(desc + " A " + name + " reached through a reference: its own fields and core, not its references.")
	}
	s := obj{"type": "object", "required": required, "additionalProperties": false, "properties": props}
	if desc != "" {
		s["description"] = desc
	}
	o.schemas[key] = s
	return ref(key)
}

// object defines the schema of a non-record object: all its fields.
func (o *openAPI) object(t *graphql.Object) obj {
	if _, ok := o.schemas[t.Name()]; ok {
		return ref(t.Name())
	}
	o.schemas[t.Name()] = obj{}
	props := obj{}
	var required []string
	for _, n := range fieldOrder(t) {
		fd := t.Fields()[n]
		if needsArgs(fd) || omitted(t, n) {
			continue
		}
		props[n] = o.out(fd.Type, 0)
		if fd.Description != "" {
			props[n] = withDescription(props[n].(obj), fd.Description)
		}
		required = append(required, n)
	}
	s := obj{"type": "object", "required": required, "additionalProperties": false, "properties": props}
	if t.Description() != "" {
		s["description"] = t.Description()
	}
	o.schemas[t.Name()] = s
	return ref(t.Name())
}

// withDescription adds a description to a schema (beside a $ref too, as
// JSON Schema 2020-12 allows).
func withDescription(s obj, desc string) obj {
	c := obj{"description": desc}
	for k, v := range s {
		c[k] = v
	}
	return c
}

// input returns the JSON Schema of a value of input type t. A list also
// takes a single element (GraphQL's input coercion).
func (o *openAPI) input(t graphql.Type) obj {
	nn, isNonNull := t.(*graphql.NonNull)
	if isNonNull {
		t = nn.OfType
	}
	var s obj
	switch t := t.(type) {
	case *graphql.List:
		item := o.input(t.OfType)
		s = obj{"anyOf": []obj{{"type": "array", "items": item}, item}}
	case *graphql.Scalar:
		s = scalarSchema(t.Name())
	case *graphql.Enum:
		s = o.enum(t)
	case *graphql.InputObject:
		s = o.inputRef(t.Name())
	default:
		s = obj{}
	}
	if isNonNull {
		return s
	}
	return orNull(s)
}

// inputRef defines an input object's schema.
func (o *openAPI) inputRef(name string) obj {
	if _, ok := o.schemas[name]; ok {
		return ref(name)
	}
	in, ok := o.a.types[name].(*graphql.InputObject)
	if !ok {
		return obj{}
	}
	o.schemas[name] = obj{}
	props := obj{}
	var required []string
	fields := in.Fields()
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := fields[n]
		props[n] = o.input(f.Type)
		if f.Description() != "" {
			props[n] = withDescription(props[n].(obj), f.Description())
		}
		if _, nonNull := f.Type.(*graphql.NonNull); nonNull && f.DefaultValue == nil {
			required = append(required, n)
		}
	}
	s := obj{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	if in.Description() != "" {
		s["description"] = in.Description()
	}
	o.schemas[name] = s
	return ref(name)
}
