// Package gql turns an application's schema.Model into the executable
// GraphQL API of its instances and runs requests on it: it is the engine
// every door of the service ends in.
//
// # The engine
//
// Engine (engine.go) is the one way in. For a request it resolves the
// instance (core-domain, through tenant.Directory.Resolve), the caller
// (auth.Accounts.Authenticate), the release the instance runs (loaded
// once: the request finishes on it) and that release's compiled Schema,
// typed; then it runs documents on it (Engine.Run, Engine.Do). The engine
// speaks no HTTP (internal/archtest holds it to that): the doors in front
// of it are packages of their own — gql/transport serves /graphql (POST,
// GET, SSE and WebSocket), package rest rewrites /rest/v1 into documents,
// package webhook hands raw requests to Engine.OpenWebhook and
// Engine.RunWebhook — and package server/door holds their shared
// middleware (opening a request, CORS) and writers. They reach the engine
// through its exported methods only, and never the store or each other.
//
// Subscriptions (subscriptions.go) is the state of the subscriptions the
// engine runs, apart from the rest of it: the context they all run under,
// the connections counted per instance and per caller, and the shared
// readers of the instances' feeds (feed.go).
//
// The engine keeps at most DefaultSchemaLimit (256) releases compiled
// (schemas.go; a compiled schema takes about 211 KiB, so about 54 MiB at
// worst, however many releases are stored), evicting those asked for
// least recently and compiling an evicted one again from its model, once
// however many requests ask at the same moment. A compiled schema's lookup
// takes no lock and does not allocate; a request keeps the schema it got
// until it ends, whatever is evicted meanwhile.
//
// # The executor
//
// One compiled Schema serves every instance of a release. It holds the
// graphql-go schema (built once, then warmed so that graphql-go's lazily
// built parts cannot race) and a bounded cache of parsed and validated
// documents, so a document text is parsed and validated once per release.
//
// Cached documents run on a plan compiled once per document and operation
// (plan.go): selections collected per runtime type, arguments prepared,
// the schema's own resolvers called, JSON appended in selection order.
// graphql-go stays the engine of record: its parser, validator and
// introspection, and graphql.Execute for whatever a plan does not cover.
// The differential tests hold the two executors to the same answers.
//
// The generated API is the one of DESIGN.md: find, get, upsert, delete,
// trash, untrash, link, unlink, the record types with a `core` metadata
// object, CoreMutationType, CoreRootAggregate, CoreUpsertInputUnion,
// CoreFilterConnection and PageInfo; Hypi's math (CoreMathInputUnion,
// <T>Maths, MathInputInt, MathInputFloat; present when some type has a
// numeric field math may change: a stored Int or Float, not a list nor
// @unique, of a declared type) and deleteScalars (resolve_math.go: it
// answers the number of records changed; built-in types are refused); and
// the subscription root
// (subscribe, CoreChange, CoreChangeOp), run by subscribe.go on the
// store's change feed and carried over SSE and WebSocket by gql/transport.
//
// Decisions where the design is silent:
//   - Interfaces (interfaces.go): each is a GraphQL interface (core and its
//     fields) its record types implement; CoreMutationType lists it
//     beside the record types. find(type: I) reads every implementing
//     type with the filter bound against I's fields (and each type's own
//     rules), merges them in the filter's order (core.id breaking ties)
//     and pages forward only: after a cursor (a record id) means a greater
//     core.id in every implementing type, so it needs the order of core.id
//     (no SORT); before, last, page and the page offsets would need the
//     cursor's record and its type, and are refused for an interface.
//     get(type: I, id) reads the implementations in name order. delete,
//     trash, untrash, link, unlink, deleteScalars and subscribe refuse an
//     interface (subscribe names its implementations). A field typed by I takes <I>Input, {core: {id, impl}}
//     (impl optional, naming the implementing type; creating a record
//     through it is impossible: which type?), is kept as the id and reads
//     the record of that id from the implementations in name order
//     (generated ids never collide; ids a client chooses should not repeat
//     across the implementations). core.impl answers the implementing type
//     of a record whose type implements an interface, unless the client
//     wrote core.impl.
//   - Paging: `after`/`before` are record ids; FIRST is accepted as
//     `after` (from the start) and LAST as `before` (to the end). `page`
//     (from 1) skips page-1 pages. nextOffsets lists the `after` cursors
//     of the next pages (the first is endCursor); previousOffsets those of
//     the previous pages, nearest first, a page that starts at the
//     beginning opening with FIRST. Facts beyond the page are read from
//     the store only when a document selects them.
//   - Trashed records are hidden from find (unless includeTrashed), from
//     get, and from reference fields; delete acts on trashed records too.
//   - One delete, trash or untrash touches at most 10,000 records.
//   - A nested record input holding only core.id references that record,
//     which must exist; any other nested input is upserted.
//   - Timestamps are served as ISO-8601 UTC with milliseconds.
//   - Input values are checked against the model by upsert itself (read
//     as sent, before graphql-go's coercion, which would drop the explicit
//     nulls that clear a field).
//   - Bounds per caller (docs/limits-per-caller.md): requests without a
//     valid token, and logins, take from a rate-limit bucket of their
//     client address, never from the instance's (tenant.RateLimiter);
//     each account, and each anonymous client address, holds at most its
//     share of the instance's subscription connections
//     (Subscriptions.Connect); a subscription event's changed names only
//     the fields the caller may read, and an UPDATED of hidden fields
//     alone is not delivered (visibleChanged); the grants events are
//     decided on are read again once the feed shows a grant changed
//     (forgetGrants).
//
// # Validation directives
//
// The upserter applies each record field's schema.Rules (rules.go) to the
// values a write sets, after converting them (a @secret is checked before
// it is hashed); checkStored then reads the records the write names once
// and refuses a new record missing a @notNull or @notEmpty field and a
// change of an @immutable one, before anything is written; link and
// unlink apply the same rules to references. A record may change between
// that read and the write, so the ops also name the @immutable fields
// they set (store.Op.Keep), which the store checks in the write itself:
// of two writers that both found no record, one creates it and the other
// fails if it would change a kept field. Every door (REST, functions'
// and webhooks' core.graphql) runs through the upsert resolver, so none
// bypasses them. A @secret is compared only by ArcQL equality beside an
// equality on core.id or a single @unique field: resolveSecrets
// (secrets.go) verifies the hash of the one record that names and
// rewrites the term to that id before binding, in bindFilter, which every
// filter (find, delete, aggregate where, subscriptions, listed references)
// goes through.
//
// # Introspection and input values
//
// Who may select __schema and __type is the instance's setting
// introspection (the instance token by default; account sessions, or
// anyone, where it says so): Schema.Run refuses any other caller's
// document that selects them anywhere, before its validation errors
// (introspection.go). For those callers, request-level errors lose
// graphql-go's suggestions and the names of types their document did not
// write (Schema.hideSchema). Variables are held to GraphQL's input
// coercion where graphql-go is lenient: an object or a list for String,
// ID, Int, Float, Boolean, DateTime, Email or an enum is BAD_REQUEST
// naming the variable, checked once in Run before either executor
// coerces anything (variables.go). docs/introspection-and-input.md says
// what clients see.
package gql
