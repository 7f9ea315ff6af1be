package gql

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/access"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/mail"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
	"github.com/corehq/core/tenant"
)

// Env is who and what one request runs for: the instance, the release it
// loaded when it started (it finishes on that one even if the instance
// moves on), the caller, and the store.
type Env struct {
	Store    store.Store
	Accounts *auth.Accounts
	Instance *tenant.Instance
	Release  *tenant.Release
	// Schema is the release's compiled schema, which the request runs on.
	Schema    *Schema
	Principal auth.Principal
	// ClientIP is the caller's address, for login throttling.
	ClientIP string
	// Token is the caller's token as sent (functions receive it as
	// input.core.token to call back into the API as the caller).
	Token string
	// Functions runs the functions root fields are bound to (@fn); nil
	// where functions are not enabled.
	Functions fn.Runtime
	// authErr is why the token sent was refused (Engine.Open): the
	// request runs as Anonymous only if it only logs in, else it answers
	// authErr.
	authErr error
	// functionErr, when set, receives the error of the first function
	// call of the request that fails (RunWebhook classifies it).
	functionErr *error
	// outbox queues the mail the request sends; nil: none is sent.
	outbox *mail.Outbox
	// grants are the instances' grants; nil reads as none.
	grants *access.Cache
	// rules keeps resolved @access rules across requests; nil: each
	// request resolves its own.
	rules *ruleCache
	// meter counts function calls and holds the functionCallsPerDay
	// quota; nil counts nothing.
	meter *tenant.Meter
	// aggMemory is the memory the engine's aggregations share; nil: each
	// is bounded alone.
	aggMemory *store.AggMemory
	// limiter holds the instance's rate limit, which an anonymous
	// caller's work takes from (admitAnonymous); nil limits nothing.
	limiter *tenant.RateLimiter
	// contents keeps uploaded files' contents; nil: none.
	contents store.Contents
	// sealer seals the secrets records keep (event hook keys); nil
	// refuses to store them.
	sealer tenant.Sealer
	// functionLog receives the failures of after triggers; nil: none.
	functionLog fn.LogSink
	// triggerDepth is how many levels of triggers the request runs in
	// (triggers.go): 0 for a client's request.
	triggerDepth int
}

// admitAnonymous takes a token of the instance's rate limit for work an
// anonymous caller may run (anything but logging in, where the instance
// allows it): its request took one of its client address's only
// (Engine.admitCaller), which bounds the address, not the instance.
func (e Env) admitAnonymous() error {
	if e.limiter == nil || e.Principal.Kind != auth.Anonymous {
		return nil
	}
	return e.limiter.Admit(e.Instance)
}

// Unauthenticated returns why the caller's token was refused, or nil. A
// door that serves something of its own (REST's OpenAPI document) checks
// it; documents run by the engine answer it themselves unless they only
// log in.
func (e Env) Unauthenticated() error { return e.authErr }

// call is the per-request state resolvers reach through the context.
type call struct {
	Env
	schema *Schema
	log    *zap.Logger
	// vars are the request's variables as sent, before graphql-go's
	// coercion (which drops explicit nulls that upsert needs).
	vars map[string]any
	now  time.Time
	// rightsOf caches what the caller may do through grants, per type
	// and operation (rights).
	rightsMu sync.Mutex
	rightsOf map[string]*access.Set
	sources  map[access.Source][]string // sourceMembers
	// rulesOf caches the types' @access rules with this request's
	// parameters and their hops resolved, per type and rule (rule).
	rulesOf map[string]arcql.Expr
	// rulesSeq is the change feed's position the rule cache was checked
	// at for this request (rulesChecked: it was).
	rulesSeq     uint64
	rulesChecked bool
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// callFrom returns the request state; resolvers only run inside Do, which
// always sets it.
func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// builtinPublisher publishes the built-in types (core). It is never
// written: the Core fields read pointers into it.
var builtinPublisher = tenant.Release{Realm: "core", App: "core", Name: "core"}

// publisher returns the release whose Realm, App and Name are the
// publisherRealm/App/Release of records of a type.
func (c *call) publisher(builtin bool) *tenant.Release {
	if builtin {
		return &builtinPublisher
	}
	return c.Release
}
