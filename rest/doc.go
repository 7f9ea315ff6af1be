// Package rest serves the REST interface /rest/v1 of SERVICE.md sections
// 4 and 5: a transport in front of the one GraphQL executor.
//
// # Contract
//
// Each request is rewritten by Rewrite — a pure function of the schema's
// API (NewAPI), the method, the route, its path parameters, the query
// string and the decoded body — into a gql.Request and a Shape, then run
// on the engine (gql.Engine: the instance, caller and compiled schema it
// resolved for the request) exactly as /graphql runs a request. Request values travel
// only as GraphQL variables: the document text depends only on the root
// field, the record type and which arguments are present, so one text
// serves every request of a kind and is parsed and validated once per
// release (testdata/rest/rewrite.golden pins the rewrite of every route).
//
// Answers select what DESIGN.md "REST interface" lists, generated from the
// schema: every scalar, enum and Json field, core with all the metadata,
// embedded objects with their fields, reference fields expanded one level
// (their own fields and core), and a union as an inline fragment per
// member (narrowed to the record type a `type` argument names). A
// success is {"data": {<field>: …}} with 200; a failure the errors
// envelope of errcode with the status of the first error's code.
//
// # Routes
//
//	POST, PUT /                    upsert(values) from {"values": {<Type>: [records] or record}}
//	GET       /{aggregate}         find: arcql (default *), first, after, before, last, page, includeTrashed
//	GET       /{aggregate}/{id}    find(arcql: core.id = '<id>'): a page; 404 NOT_FOUND when empty
//	DELETE    /{aggregate}         delete: arcql (required), clearArrayReferences
//	DELETE    /{aggregate}/{id}    delete(arcql: core.id = '<id>'): clearArrayReferences
//	GET       /fn/query/{fn}       any Query field, arguments from the query string
//	POST, PUT /fn/{root}/{fn}      any Query or Mutation field, arguments from the body
//	POST      /login               login or loginByEmail, by the body's fields
//	GET       /openapi.json        the OpenAPI 3.1 document of the instance's schema
//	OPTIONS   every path above     CORS preflight
//
// # Decisions where the service description is silent
//
//   - GET /{aggregate}/{id} answers the page find gives (the description
//     shows `{data: {find: <page>}}`) and 404 NOT_FOUND when the page is
//     empty; it takes includeTrashed only. The id is quoted with
//     arcql.Quote into a filter that travels as a variable.
//   - GET /{aggregate} without arcql reads every record, a page at a time.
//     DELETE /{aggregate} without arcql, or with a blank one, is 400:
//     deleting every record says so with arcql=*. DELETE of an id that
//     names no record answers {"data": {"delete": 0}} with 200.
//   - Query strings are coerced by the argument's GraphQL type: Int (32
//     bits), Float (JSON's number grammar, finite), Boolean (true or
//     false), String, ID, DateTime and Email as they are (the scalars check
//     the last two), an enum by value name, a list as the parameter
//     repeated, an input object, Json or a schema's own scalar as JSON
//     text. Values are UTF-8. A non-list parameter given twice, a value
//     that does not fit, and a parameter the route does not take are 400
//     naming the parameter; an unknown record type for CoreMutationType is
//     404 UNKNOWN_TYPE. A parameter named type=query is accepted (and only
//     that value) on /fn/query/login and /fn/query/loginByEmail, as the
//     description's samples send it.
//   - Bodies (POST, PUT) are one JSON object: duplicate keys at any depth,
//     data after the object, nesting deeper than 64 levels and any other
//     JSON value are 400; over the server's body limit 413. An empty body
//     is no arguments (for /fn routes; / and /login need one). The
//     content-type is not checked. POST and PUT routes take no query
//     string. Body values are passed on as sent; GraphQL's variable
//     coercion checks them (400 naming the variable, which is named like
//     the argument).
//   - GET runs queries only: GET /fn/mutation/{fn} is 400 (as GET /graphql
//     refuses mutations). POST and PUT run either root. {root} is query or
//     mutation in lower case; anything else, or an unknown function, is 404
//     NOT_FOUND.
//   - POST /login with both username and email, or neither, is 400. A
//     login answered with an errorCode is 401 with the same body (for both
//     login routes and /fn/query/login*), so clients read errorCode;
//     throttled logins are 429 with Retry-After.
//   - Errors keep message and extensions (code, retryAfter); GraphQL's
//     error paths are left out.
//   - A record type whose name is a route word is shadowed where the route
//     matches: /fn/{root}/{fn}, POST /login, /openapi.json win over
//     /{aggregate}[/{id}]. A slash in an id must be escaped (%2F); an
//     unescaped one is read as part of the id too.
//   - CORS: an instance's settings.cors.allowedOrigins (origins, or "*")
//     decide. Real requests get Access-Control-Allow-Origin (the origin
//     itself), Expose-Headers and Vary: Origin when the instance named by
//     core-domain allows the origin, failures of the domain or token
//     included. A preflight needs no token; it carries no core-domain when
//     a browser sends it, so it is allowed when any instance allows the
//     origin (the real request is then answered by its instance's own
//     policy). Methods GET, POST, PUT, DELETE, OPTIONS; headers
//     authorization, content-type, core-domain, x-request-id; Max-Age 600.
//   - /openapi.json shows the schema, so it needs a token unless the
//     instance allows anonymous requests (as introspection does). It is
//     built once per release: a path per record type (/Book, /Book/{id})
//     and per root field, every record, input and enum as a JSON Schema.
package rest
