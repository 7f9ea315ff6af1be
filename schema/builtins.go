package schema

// builtinSDL is the prelude merged into every Model: the scalars, enums,
// record types, embedded object types, inputs and directives core defines
// itself. Its types carry Builtin; an application may use them but not
// redefine or extend them. Which object types are records and which fields
// are hidden is not expressible in SDL and is listed below it.
const builtinSDL = `
"Any JSON value: an object, array, string, number, boolean or null."
scalar Json

"Any JSON value, as Json (Hypi's name for it)."
scalar Any

"A UUID in its text form, such as 123e4567-e89b-12d3-a456-426614174000; validated on input and kept in lower case."
scalar UUID

"A 64-bit integer, exact end to end: a JSON number (beyond 2^53 too) or a string of decimal digits on input, a JSON number on output."
scalar Long

"A date and time in ISO-8601 (RFC 3339) form, such as 2024-05-01T12:00:00Z; served in UTC."
scalar DateTime

"An e-mail address such as ada@example.com; validated on input."
scalar Email

"The root type a GraphQLRef names a field of."
enum OpType {
  Query
  Mutation
  Subscription
}

"Binds a Query or Mutation field to the function name at version; env names the instance settings the function may read."
directive @fn(name: String!, version: String!, env: [String!]) on FIELD_DEFINITION

"A field a trigger calls: a Query or Mutation field bound by @fn."
input TriggerRef {
  type: OpType!
  field: String!
}

"The functions of a trigger: before answers Boolean and refuses the write with false; after runs once the write is committed."
input TriggerConfig {
  before: TriggerRef
  after: TriggerRef
}

"Runs functions around every upsert of a record type, or every call of a Mutation field (docs/reactions.md)."
directive @trigger(config: TriggerConfig!) on OBJECT | FIELD_DEFINITION

"Declares indexes of a record type: each set lists the fields of one index."
directive @indices(sets: [[String!]!]!) on OBJECT

"Access rules of a record type: ArcQL filters with $caller and $now; read, update and delete widen what the owner rule and grants allow, create restricts what may be created."
directive @access(read: String, create: String, update: String, delete: String) on OBJECT

"Makes a field's value unique among the records of its type in an instance; on a list, each element."
directive @unique on FIELD_DEFINITION

"Lets anonymous callers call a Query or Mutation field, on instances that allow anonymous requests."
directive @public on FIELD_DEFINITION

"Refuses a write that leaves the field null: it must be given when a record is created and cannot be cleared."
directive @notNull on FIELD_DEFINITION

"Refuses null, the empty string and the empty list."
directive @notEmpty on FIELD_DEFINITION

"Bounds a String's length in characters (on a list, each element's): min and max are inclusive."
directive @length(min: Int, max: Int) on FIELD_DEFINITION

"The whole value must match one of the regular expressions (RE2 syntax), or all of them when allMustMatch is true."
directive @pattern(regex: [String!]!, allMustMatch: Boolean = false) on FIELD_DEFINITION

"The String must be an e-mail address."
directive @email on FIELD_DEFINITION

"The DateTime must lie before the time of the write."
directive @past on FIELD_DEFINITION

"The DateTime must lie after the time of the write."
directive @future on FIELD_DEFINITION

"The field keeps the value the record was created with."
directive @immutable on FIELD_DEFINITION

"Write-only: kept as an Argon2id hash, never returned, compared only by ArcQL equality."
directive @secret on FIELD_DEFINITION

"Marks a field as deprecated."
directive @deprecated(reason: String = "No longer supported") on FIELD_DEFINITION

"A user of an instance, who logs in by username or by e-mail."
type Account {
  username: String @unique
  "Write-only: set as PasswordInput, kept as a hash, never returned."
  password: String
  emails: [Email!] @unique
  "Hypi's phones: each a number and its calling code."
  phones: [Phone!]
  enabled: Boolean
  verified: Boolean
}

"A telephone number, as Hypi's Phone: written and read as {number code}."
type Phone {
  "The number, such as 1234567."
  number: String!
  "The country calling code, such as +65."
  code: String
}

"Hands requests to /webhook/{domain}/{name} to the function that query names, run as the account as."
type Webhook {
  name: String @unique
  as: Account
  query: GraphQLRef!
}

"Whether an AccessRight grants on records its owner owns (RBP, resource-based) or on every record of a type (SBP, scope-based; the instance token's only)."
enum AccessRightType {
  RBP
  SBP
}

"Grants an operation on records to accounts, to the members of a team, to every account (member id *) or to anonymous callers (member id anonymous)."
type AccessRight {
  "A record id, or * for every record of resourceType owned by resourceOwnerId, present and future."
  resource: String!
  "A type name, or *."
  resourceType: String!
  "Query, Mutation or *."
  operationType: String!
  "get, find, upsert, delete, trash, untrash, link, unlink, or *."
  operation: String!
  "Comma-separated field names the grant is limited to; absent: every field."
  fields: String
  permissionType: AccessRightType!
  "false disables the grant; absent or true: active."
  approved: Boolean
  "Active from (inclusive); absent: always."
  startDate: DateTime
  "Active until (exclusive); absent: forever."
  endDate: DateTime
  members: [Account!]
  "The type of the record whose list field holds the members, read at request time."
  membersSourceType: String
  "That record's list field of Account references."
  membersSourceField: String
  "That record's id."
  membersSourceId: String
  "The account whose records an RBP grant covers: set by the service to the creating account; only the instance token may set another."
  resourceOwnerId: String
}

"Posts the changes of the instance's records to url, signed per Standard Webhooks (docs/reactions.md); written with the instance token only."
type EventHook {
  "The endpoint: an http or https URL."
  url: String!
  "The record types whose changes are posted; absent or empty: every type."
  types: [String!]
  "CREATED, UPDATED, TRASHED, UNTRASHED or DELETED; absent or empty: all."
  operations: [String!]
  "Only the records this ArcQL filter matches (after the change; before it for DELETED)."
  arcql: String
  "false pauses the hook; absent or true: active. The service sets false when deliveries keep failing."
  enabled: Boolean
  "Write-only: the signing key, whsec_ and the base64 of 24 to 64 random bytes; kept sealed, never returned."
  secret: String!
  "Set by the service when it disables the hook: why."
  lastError: String
}

"How often a ScheduledFunction runs: intervalFrequency of these units; MONTH_END and YEAR_END: the last day of the month, of the year, at start's time of day."
enum ScheduleInterval {
  MINUTE
  HOUR
  DAY
  WEEK
  MONTH
  YEAR
  MONTH_END
  YEAR_END
}

"Calls the Query or Mutation field fn (bound to a function) at each due time with the arguments id, arcql and type it declares (docs/reactions.md); written with the instance token only."
type ScheduledFunction {
  "The field to call: a Query or Mutation field bound by @fn."
  fn: GraphQLRef!
  "The first run; absent: the time of the write."
  start: DateTime
  "No run after it; absent: none."
  end: DateTime
  "false: runs once, at start; absent or true: every interval."
  repeats: Boolean
  "The unit of the interval; absent: DAY."
  interval: ScheduleInterval
  "How many units between runs, at least 1 (the shortest interval is one minute); absent: 1."
  intervalFrequency: Int
  "Set by the service: when the last run started."
  lastExecuted: DateTime
  "Set by the service: the next run; null once the schedule is over."
  nextExecution: DateTime
  "Set by the service: whether the last run succeeded."
  lastExecutionSucceeded: Boolean
  "Set by the service: why the last run failed."
  lastExecutionError: String
  "Passed to the function as the argument arcql."
  arcql: String
  "Passed to the function as the argument type."
  type: String
  "Passed to the function as the argument id."
  id: String
}

"Hypi's request for a password reset code: an upsert sends the code to the account with the address to (the same answer either way); the request is not kept, and nothing of the code is read back."
type PasswordReminder {
  "The address the code is sent to, when an account has it."
  to: Email!
  "Always true in an upsert's answer: the code is valid until used or expired."
  valid: Boolean
  "Made by the service and sent by mail only; never written or read by clients."
  code: String
  "The instance's smtp.from sends every message: written by no client."
  from: String
  "The messages are the instance's templates (mailTemplates): these three are written by no client."
  subject: String
  htmlMessage: String
  plainTextMessage: String
}

"Hypi's request for an e-mail verification link: an upsert sends the link to the account with the address email (the same answer either way); the request is not kept."
type EmailVerification {
  "The address to verify, when an account has it (a session's: its own account's)."
  email: Email!
  "Where the link leads after it is followed: a URL on one of the instance's origins."
  redirectTo: String
  "As in PasswordReminder, from, subject, htmlMessage and plainTextMessage are the instance's (smtp.from, mailTemplates): written by no client."
  from: String
  subject: String
  htmlMessage: String
  plainTextMessage: String
}

"The URL of a request that reached a webhook."
type URL @indices(sets: [["path"]]) {
  path: String!
  queryParams: Json
  port: Int
  host: String
}

"Where an uploaded file is: UPLOADED once its content is kept whole."
enum FileStatus {
  UPLOADED
}

"Where a file's content is downloaded: path is GET /file/{instanceId}-{fileId}.{extension} of the service."
type FileURL {
  path: String!
}

"An uploaded file (POST /upload/{directory}): made by uploads only; its content is served at url.path under the same read rules as the record."
type File @indices(sets: [["directory"]]) {
  "The name the client gave the part (its filename)."
  name: String!
  "The directory the upload named, \"\" for none."
  directory: String!
  "directory/name."
  path: String!
  "The extension of the served name, from the media type."
  extension: String!
  "The media type, sniffed from the content (never the client's)."
  type: String!
  "The content's length in bytes."
  size: Int!
  status: FileStatus!
  url: FileURL!
  "The hex SHA-256 of the content."
  sha256: String!
  "An image's width and height in pixels; absent for other files."
  width: Int
  height: Int
}

"A field of a root type, by name."
type GraphQLRef {
  type: OpType!
  field: String!
  selection: String
}

"The HTTP response a webhook function answers: body as a string is sent as is, any other JSON value encoded as JSON."
type WebhookResponse {
  status: Int
  headers: Json
  body: Json
}

"A password as written by a client."
input PasswordInput {
  value: String!
}

"The URL of a request that reached a webhook."
input URLInput {
  path: String!
  queryParams: Json
  port: Int
  host: String
}

"The HTTP request a webhook received: body is the raw body as text."
input WebhookPayload {
  url: URLInput!
  headers: Json!
  body: String
  method: String
}
`

// builtinSDLName names the prelude in positions of built-in definitions.
const builtinSDLName = "core:builtins.graphql"

// isBuiltinRecord reports whether a built-in object type is a record type
// (stored, queried, upserted); the other built-in object types are embedded.
func isBuiltinRecord(name string) bool {
	switch name {
	case "Account", "Webhook", "URL", "AccessRight", "File", "EventHook", "ScheduledFunction", "PasswordReminder", "EmailVerification":
		return true
	}
	return false
}

// isBuiltinHidden reports whether a built-in field is write-only.
func isBuiltinHidden(typ, field string) bool {
	return (typ == "Account" && field == "password") || (typ == "EventHook" && field == "secret")
}

// graphQLScalars are GraphQL's own scalars, known without declaration.
var graphQLScalars = [...]string{"String", "Int", "Float", "Boolean", "ID"}

// builtinRootFields are the fields of Query and Mutation that gql generates;
// an application may not declare a root field of these names in either root.
func isBuiltinRootField(name string) bool {
	switch name {
	case "find", "get", "login", "loginByEmail", "aggregate",
		"upsert", "delete", "trash", "untrash", "link", "unlink", "createAccount", "logout", "math", "deleteScalars",
		"requestPasswordReset", "resetPassword", "changePassword", "requestEmailVerification", "requestEmailChange", "verifyEmail":
		return true
	}
	return false
}
