// Package schema turns an application's GraphQL SDL into a validated Model:
// its record types, embedded object types, enums, inputs, custom scalars and
// the root fields it adds, with core's built-in types merged in. gql builds
// the executable schema from the Model, the stores declare their indexes
// from it, and ArcQL binds filters against it (Model implements
// arcql.Schema).
//
// # Contract
//
// Parse(sdl, lim) either returns a Model or an Errors listing every problem
// found, each at the 1-based line and column of the offending definition,
// field, argument, directive or value in the uploaded text (a syntax error
// stops parsing and is reported alone; problems of the text as a whole have
// line 0). At most 100 problems are listed. Parse does no I/O, keeps no
// state between calls and is safe for concurrent use; a Model is immutable
// once returned and may be shared.
//
// Untrusted input is bounded by Limits: the byte size is checked before
// parsing, tokens while parsing, the number of type definitions right after
// parsing, and fields per type while building. A zero limit means its
// default (DefaultLimits), never "unlimited".
//
// # What a schema may declare
//
//   - Every object type (type T { … }) is a record type (an aggregate):
//     stored, found, upserted, linked. Fields take scalars, enums, record
//     types (KindRef: stored as ids) and the built-in embedded object types
//     GraphQLRef, WebhookResponse and Phone (KindObject). Record fields take no
//     arguments; the name core (the metadata object) and names starting
//     with __ are reserved. A list of lists is not supported anywhere.
//
//   - type Query { … } and type Mutation { … }, or extend type Query /
//     extend type Mutation, add root fields with arguments; @fn binds one to
//     a function. A root field without @fn is accepted (Fn is nil). The
//     names of the built-in root fields (find get login loginByEmail upsert
//     delete trash untrash link unlink createAccount logout math
//     deleteScalars, and the password and verification ones) are refused in
//     both roots.
//
//   - input types (for root-field arguments), enums and custom scalars.
//     Arguments and input fields take scalars, enums and input types; an
//     output type, or a generated <T>Input, is refused. Default values are
//     checked against their type. Inputs whose non-null, non-list fields
//     without defaults form a cycle can never be given and are refused.
//
//   - extend type/input/enum/scalar of the application's own types (fields
//     and values join in source order). Built-in types cannot be extended
//     or redefined.
//
//   - interface I { … } (and extend interface): fields its record types
//     share, typed as record fields are, without directives (core: Core
//     may be declared). type T implements I (in the definition or an
//     extension) makes record type T an implementation: T must have every
//     field of I, of the same named type and list-ness, at least as
//     non-null (GraphQL's rule); a @secret field cannot implement one (an
//     interface's fields are read and filtered). An interface may have no
//     implementation (Hypi's example apps declare one such). A record
//     field typed by an interface is a reference (KindRef, Type the
//     interface) to a record of any implementing type, kept as its id;
//     Interface.Impls lists them. ArcQL over an interface binds its fields
//     and the metadata; a reference typed by an interface filters by the
//     id it holds (no hop through it: a hop needs one target type). Only
//     record types implement interfaces; an interface implements none; a
//     Query or Mutation field cannot be typed by one (a function's answer
//     names no type); <I>Input is reserved (the generated reference input).
//
// Not supported, refused with a message saying so: union (a stored
// reference names one record type or an interface; the message says to
// declare an interface), an interface implementing interfaces, type
// Subscription (the subscription root is built in, gql), schema { … } and
// extend schema, directive extensions, and directives other than the
// built-in ones.
//
// # Reserved type names
//
// GraphQL's scalars, the built-in type names, names starting with Core or
// __, AccessToken, PageInfo, the aggregation types (AggInt, AggFloat,
// AggDateTime, AggOther, AggOrder, TimeUnit, Pair), <T>Input for every
// record and object type T (BookInput when Book is declared; AccountInput,
// GraphQLRefInput, …), <T>Aggs, <T>GroupBy and <T>AggField for every
// record type T, and "aggregate" (the REST path /rest/v1/aggregate/{Type}).
// Query and Mutation only as object types. A type whose definition was
// refused is reported once, where it is defined, not again where it is
// used.
//
// # Directives
//
// @fn, @indices, @access, @unique, @public, @deprecated and the
// validation directives below are known without declaration; a
// schema may declare them only exactly as core does (descriptions aside).
// Directive arguments are literals, checked against the declared types
// (GraphQL's coercion of a single value to a list of one applies).
//
//   - @fn(name: String!, version: String!, env: [String!]) only on Query and
//     Mutation fields. name and version: 1–64 letters, digits, '.', '_' or
//     '-', starting with a letter or digit (internal/names, the rule fn
//     publishes versions under: they become admin paths and image tags);
//     env names must not be empty.
//   - @indices(sets: [[String!]!]!) only on record types. Each set names
//     one or more fields of the type, each once; hidden and embedded object
//     fields cannot be indexed; a set holds at most one list field (MongoDB
//     cannot build a compound index over two arrays); the same set twice
//     is an error.
//   - @access(read, create, update, delete: String) only on record types:
//     each an ArcQL filter over the type with the parameters $caller and
//     $now, parsed and bound once here (Type.Rules, arcql.BindRule). A rule
//     that does not parse, names an unknown or hidden field (a password)
//     or a parameter other than those two, crosses more than
//     arcql.MaxHops references, or is empty refuses the release, the
//     message naming the type, the rule and the position in it (and the
//     SDL position). A rule sees core.instanceId as no instance's: the
//     same release may serve several instances.
//   - @unique only on record fields: scalars other than Json, enums, single
//     references (a one-to-one relation), and lists of those scalars and
//     enums, where each element is unique (Account.emails). Refused on
//     lists of references, embedded objects and Json.
//   - @deprecated(reason: String) on record and root fields.
//   - Hypi's validation directives, on record fields only, read into
//     Field.Rules (validation.go; gql enforces them on every write):
//     @notNull, @notEmpty (String fields and lists), @length(min, max)
//     and @pattern(regex, allMustMatch = false) (String fields or lists
//     of String), @email (String, Email), @past and @future (DateTime),
//     @immutable, and @secret (a single String; the field becomes Hidden;
//     not with @unique, @length, @pattern, @email or @immutable). @pattern
//     takes 1 to MaxPatterns expressions of RE2 syntax, each at most
//     MaxPatternBytes long, matched against the whole value (anchored, as
//     Java's Matcher.matches, which Hypi uses); @length needs a bound,
//     neither negative, min ≤ max; @past with @future is refused.
//
// # Built-in types
//
// builtins.go holds them as SDL: scalars Json, Any, UUID, Long, DateTime, Email; enum
// OpType; record types Account (password is hidden: write-only), Webhook,
// URL; embedded object types GraphQLRef, WebhookResponse; inputs
// PasswordInput, URLInput, WebhookPayload. They are part of every Model
// with Builtin set; their positions refer to the prelude, not the upload.
package schema
