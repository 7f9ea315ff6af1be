package gql

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/access"
	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/fn"
	"github.com/corehq/core/mail"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Engine is where every door's request ends. It resolves the instance a
// request names, the caller its token makes, and the compiled schema of
// the release the instance runs (loaded once: the request finishes on it
// even if the instance moves to another release meanwhile), then runs
// GraphQL documents on that schema. /graphql and its subscription
// transports (gql/transport), /rest/v1 (rest) and /webhook (webhook,
// through OpenWebhook) are thin doors in front of it: they read HTTP and
// write HTTP, and never reach the store or each other. Safe for
// concurrent use.
type Engine struct {
	cfg       Config
	store     store.Store
	instances *tenant.Directory
	accounts  *auth.Accounts
	functions fn.Runtime
	// functionLog receives what the engine itself has to tell an app's
	// developer (a webhook that cannot run); nil: nothing is written.
	functionLog fn.LogSink
	log         *zap.Logger
	schemas     *schemas
	// grants are the instances' AccessRight records (access.Cache).
	grants *access.Cache
	rules  *ruleCache
	// rateShare counts the processes sharing the instances' rate limits
	// (nil: this one alone); limiter applies them (tenant.RateLimiter).
	rateShare func() int
	limiter   *tenant.RateLimiter
	// meter counts the instances' requests and function calls and holds
	// their functionCallsPerDay quota (tenant.Meter).
	meter *tenant.Meter
	// aggMemory is the memory all aggregations hold at once (resolve_aggregate.go).
	aggMemory *store.AggMemory
	// subs are the subscriptions it runs: their streams, connections and
	// feed readers (subscriptions.go).
	subs *Subscriptions
	// outbox queues the mail the instances' accounts are sent (password
	// reset, e-mail verification); nil: the engine sends none.
	outbox *mail.Outbox
	// contents keeps uploaded files' contents (files.go); nil: none.
	contents store.Contents
}

// grantsTTL is how long a snapshot of an instance's grants serves before
// it is read again: the most a grant changed by another process (on a
// shared MongoDB) takes to count here.
const grantsTTL = time.Second

// EngineOption configures an Engine.
type EngineOption func(*Engine)

// WithFunctions lets the schemas' @fn fields run on rt.
func WithFunctions(rt fn.Runtime) EngineOption {
	return func(e *Engine) { e.functions = rt }
}

// WithFunctionLog writes the engine's own notes about functions that
// cannot run (a webhook's field removed by a swap, a version that is not
// published) to the instances' function logs.
func WithFunctionLog(logs fn.LogSink) EngineOption {
	return func(e *Engine) { e.functionLog = logs }
}

// WithRateShare divides the instances' rate limits among the processes
// share counts (tenant.Peers.Count), each taking its part.
func WithRateShare(share func() int) EngineOption {
	return func(e *Engine) { e.rateShare = share }
}

// WithMeter counts the instances' requests and function calls into m
// (cored runs its flushes); without it the engine keeps a meter of its
// own, which counts in memory until something flushes it.
func WithMeter(m *tenant.Meter) EngineOption {
	return func(e *Engine) { e.meter = m }
}

// WithMail queues the mail the engine sends (password reset codes,
// verification links) in o; a mail.Worker sends it.
func WithMail(o *mail.Outbox) EngineOption {
	return func(e *Engine) { e.outbox = o }
}

// Accounts returns the accounts service the engine authenticates with.
func (e *Engine) Accounts() *auth.Accounts { return e.accounts }

// Outbox returns the outbox the engine queues mail in; nil without one.
func (e *Engine) Outbox() *mail.Outbox { return e.outbox }

// meterInterval is how often the engine's own meter would flush.
const meterInterval = 2 * time.Second

// NewEngine returns the engine over the store, the directory of instances
// and the accounts service; schemas are compiled with cfg's limits (its
// zero figures DefaultConfig's).
func NewEngine(cfg Config, st store.Store, instances *tenant.Directory, accounts *auth.Accounts, log *zap.Logger, opts ...EngineOption) *Engine {
	cfg = cfg.withDefaults()
	e := &Engine{cfg: cfg, store: st, instances: instances, accounts: accounts, log: log}
	for _, o := range opts {
		o(e)
	}
	e.schemas = newSchemas(func(m *schema.Model) (*Schema, error) { return Build(m, cfg) }, instances.Holds)
	e.grants = access.NewCache(st, grantsTTL)
	e.rules = newRuleCache(st)
	e.subs = newSubscriptions(cfg, e.rateShare, e.grants)
	e.aggMemory = store.NewAggMemory(aggregateMemory)
	e.limiter = tenant.NewRateLimiter(cfg.RateLimit, e.rateShare, time.Now)
	if e.meter == nil {
		e.meter = tenant.NewMeter(st, meterInterval)
	}
	instances.OnDelete(func(ctx context.Context, id string) error {
		e.grants.Forget(id)
		e.rules.forget(id)
		e.limiter.Forget(id)
		if e.contents != nil {
			if err := e.contents.DropInstance(ctx, id); err != nil {
				return err
			}
		}
		return e.meter.Forget(ctx, id)
	})
	return e
}

// CloseStreams ends every subscription: event streams complete and
// WebSockets close with 1001 (going away). The server calls it when it
// shuts down, since it waits for the requests in flight and a stream
// never ends by itself.
func (e *Engine) CloseStreams() { e.subs.Close() }

// Subscriptions returns the state of the subscriptions the engine runs,
// which their transports count their connections in.
func (e *Engine) Subscriptions() *Subscriptions { return e.subs }

// Meter returns the meter of the instances' requests and function calls
// (the admin API's usage reads it).
func (e *Engine) Meter() *tenant.Meter { return e.meter }

// Instances returns the directory of the instances the engine serves
// (the doors' middleware resolves core-domain and CORS in it).
func (e *Engine) Instances() *tenant.Directory { return e.instances }

// Log returns the logger resolvers and doors report to.
func (e *Engine) Log() *zap.Logger { return e.log }

// Schema returns the compiled schema of a release, shared by every
// instance running it. At most DefaultSchemaLimit (SetSchemaLimit) are
// kept compiled; an evicted one is built again from the release's model,
// once however many requests ask at the same moment. A failure is
// INTERNAL, its cause kept for the request's log line.
func (e *Engine) Schema(rel *tenant.Release) (*Schema, error) {
	s, err := e.schemas.get(rel)
	if err != nil {
		return nil, errcode.Wrap(errcode.Internal, err, "internal error")
	}
	return s, nil
}

// SetSchemaLimit bounds how many releases keep their compiled schema at
// once (DefaultSchemaLimit until set; n below 1 counts as 1). Lowering it
// evicts at once.
func (e *Engine) SetSchemaLimit(n int) { e.schemas.setLimit(n) }

// SchemaCount returns how many releases hold a compiled schema now.
func (e *Engine) SchemaCount() int { return e.schemas.count() }

// Open returns the environment of a request for inst by the caller whose
// authorization header value is authorization: the caller, the release
// the instance runs now and its schema. A token that is refused does not
// fail Open: the request answers UNAUTHENTICATED when it runs anything
// but login and loginByEmail (Env.Unauthenticated).
//
// The request counts against a rate limit before anything runs for it
// (429 RATE_LIMITED over it): a caller with a valid token against its
// instance's, any other against its client address's (admitCaller).
func (e *Engine) Open(ctx context.Context, inst *tenant.Instance, authorization, clientIP string) (Env, error) {
	p, err := e.accounts.Authenticate(ctx, e.store, keysOf(inst), authorization)
	var refused error
	if err != nil {
		if errcode.As(err).Code != errcode.Unauthenticated {
			return Env{}, err
		}
		// A stale or junk token: login and loginByEmail still run, as
		// Anonymous (a client that always sends its stored token must be
		// able to log in again); anything else answers this error.
		p, refused = auth.Principal{Kind: auth.Anonymous}, err
	}
	if err := e.admitCaller(inst, p, clientIP); err != nil {
		return Env{}, err
	}
	env := e.env(inst, p, clientIP)
	env.authErr = refused
	if refused == nil {
		env.Token = auth.BearerToken(authorization)
	}
	if env.Schema, err = e.Schema(env.Release); err != nil {
		return Env{}, err
	}
	return env, nil
}

// Admit counts one more request of env's caller as Open counted the
// request that opened env (admitCaller): a WebSocket's operations each
// count as a request of their own.
func (e *Engine) Admit(env Env) error {
	return e.admitCaller(env.Instance, env.Principal, env.ClientIP)
}

// admitCaller counts one request of inst by p from clientIP against a
// rate limit (429 RATE_LIMITED over it) and the instance's meter: a
// caller with a valid token (the instance token, a session) against the
// instance's, an anonymous one (no token, or a refused one) against its
// client address's (tenant.RateLimiter.AdmitAddress), so that requests
// with junk tokens and logins never use up what the instance's users
// have. Open does it for every request; a WebSocket for each operation it
// starts (Admit).
func (e *Engine) admitCaller(inst *tenant.Instance, p auth.Principal, clientIP string) error {
	if p.Kind == auth.Anonymous {
		if err := e.limiter.AdmitAddress(inst, clientIP); err != nil {
			return err
		}
	} else if err := e.limiter.Admit(inst); err != nil {
		return err
	}
	e.meter.Request(inst.ID)
	return nil
}

// env returns the environment of a request for inst by p, loading the
// instance's release once.
func (e *Engine) env(inst *tenant.Instance, p auth.Principal, clientIP string) Env {
	return Env{Store: e.store, Accounts: e.accounts, Instance: inst, Release: inst.Release(),
		Principal: p, ClientIP: clientIP, Functions: e.functions, grants: e.grants, rules: e.rules, meter: e.meter, limiter: e.limiter,
		aggMemory: e.aggMemory, outbox: e.outbox,
		contents: e.contents, sealer: e.instances.Sealer(), functionLog: e.functionLog}
}

// keysOf returns what authentication knows of an instance.
func keysOf(inst *tenant.Instance) auth.Instance {
	return auth.Instance{ID: inst.ID, TokenHash: inst.TokenHash, AdminAccountID: inst.AdminAccountID,
		SessionIdleTimeout: time.Duration(inst.Settings.SessionIdleTimeout) * time.Second}
}

// Run runs one request in env and leaves the answer encoded, for doors
// that write it as it is (Result.Body; Release recycles the buffer).
func (e *Engine) Run(ctx context.Context, env Env, req Request) *Result {
	return env.Schema.Run(ctx, env, e.log, req)
}

// Do is Run with the answer's data decoded (Result.Data).
func (e *Engine) Do(ctx context.Context, env Env, req Request) *Result {
	return env.Schema.Do(ctx, env, e.log, req)
}
