// Package door holds what the data doors share at their HTTP edge, so
// that the engine (package gql) knows no HTTP: Resolve, the middleware
// that opens a request of a door that names its instance in core-domain
// (/graphql, /rest/v1) and leaves its gql.Env in the request context;
// CORS, the instances' cross-origin policy of those doors; the writers
// of answers (WriteJSON, WriteResult, WriteError); and the context an
// event stream runs on (WithStreamContext), which the server's request
// time-out does not bound.
//
// It decides nothing about GraphQL, records or callers: the engine opens
// a request and runs it; this package carries the outcome to and from
// echo. Doors (rest, webhook, gql/transport) import it; it imports no
// door and no store.
package door
