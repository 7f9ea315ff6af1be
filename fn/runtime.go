package fn

import (
	"context"
	"time"
)

// Runtime runs published functions. Implementations are safe for
// concurrent use; *JS is the embedded JavaScript one.
type Runtime interface {
	// Invoke runs one call of a function version and returns its result.
	// Errors are typed (see errors.go): *NotPublishedError, *FuncError (the
	// function's own error), *TimeoutError, *ExceptionError, *LimitError,
	// ErrBusy, ErrClosed, or the context's error when ctx is canceled.
	Invoke(ctx context.Context, inv Invocation) (Result, error)
}

// Invocation is one call of a function bound with
// @fn(name, version, env).
type Invocation struct {
	// App is the app whose functions are searched: the instance's app.
	App string
	// Name and Version name the function version (@fn name and version).
	Name, Version string
	// Args are the field's argument values, JSON-shaped (string, float64,
	// int, bool, nil, []any, map[string]any). The caller passes an
	// input-object argument as its JSON text (a string), so that
	// JSON.parse(input.args.payload) works in the function.
	Args map[string]any
	// Env is the instance's env (tenant.Settings.Env); only the names in
	// EnvNames (the binding's env list) reach input.env. A listed name the
	// instance does not set is absent from input.env.
	Env      map[string]string
	EnvNames []string
	// Caller becomes input.core.
	Caller Caller
	// Fetch is the instance's outbound fetch policy; the zero value
	// refuses every fetch.
	Fetch FetchPolicy
	// MaxConcurrent is the instance's share of the runtime: the calls of
	// Caller.InstanceID that may run at once (0: a quarter of
	// Config.MaxConcurrent; fairshare.go).
	MaxConcurrent int
	// Memory is the instance's memory bound of one call in bytes (0:
	// Config.Memory; at most Config.MaxMemory).
	Memory int64
	// GraphQL, when set, lets the function call the instance's own
	// GraphQL API as the caller: core.graphql(query, variables) in
	// JavaScript. The host runs the request in process (no network) and
	// answers the response as JSON ({"data": …, "errors": […]}). ctx
	// carries the call's deadline and nesting depth: pass it on to the
	// executor, so that a function reached again through it is counted.
	GraphQL func(ctx context.Context, query string, variables map[string]any) ([]byte, error)

	// remember records a verified webhook id for core.verifyWebhook in a
	// worker process, which asks the service (webhookverify.go).
	remember func(ctx context.Context, id string, until time.Time) (bool, error)
}

// Caller is who calls: input.core of the function.
type Caller struct {
	AccountID  string `json:"account_id"`
	InstanceID string `json:"instance_id"`
	Domain     string `json:"domain"`
	Token      string `json:"token"`
}

// FetchPolicy is an instance's outbound fetch setting. Even when enabled,
// only hosts on AllowHosts are reached ("api.example.com" exactly, or
// "*.example.com" for its subdomains), and private, loopback, link-local
// and other non-public addresses are always refused.
type FetchPolicy struct {
	Enabled    bool
	AllowHosts []string
}

// Result is what a call answered.
type Result struct {
	// Value is the function's result, JSON-decoded: nil, bool, float64,
	// string, []any or map[string]any.
	Value any
	// JSON is the same result as JSON text ("null" for no result).
	JSON []byte
	// Duration is how long the call ran, waiting for a runtime excluded.
	Duration time.Duration
}

// Source finds the package of a published function version. *Packages
// is the store-backed one.
type Source interface {
	// Load returns the package; *NotPublishedError when the version does
	// not exist.
	Load(ctx context.Context, app, name, version string) (*Package, error)
}

// LogSink receives the function log entries of an instance (console
// output and the runtime's notes about failed calls). *Log is the
// store-backed one.
type LogSink interface {
	// Append adds entries to the instance's function log. It must not
	// block on I/O: it is called at the end of every call that logged.
	Append(instanceID string, entries []LogEntry)
}

// LogEntry is one line of an instance's function log.
type LogEntry struct {
	Time time.Time `json:"time"`
	// Level is log, info, debug, warn or error for console output, and
	// "runtime" for the runtime's own notes (exceptions with their stack,
	// time-outs, dropped output).
	Level string `json:"level"`
	// Function is name@version.
	Function string `json:"function"`
	// Call tells the lines of one call apart.
	Call    string `json:"call"`
	Message string `json:"message"`
}
