package tenant

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
)

// Release is an immutable named version of an app: its SDL and the model
// parsed from it. Its executable schema is gql's business: the engine
// compiles it from Model when a request first needs it (gql/schemas.go).
type Release struct {
	App   string
	Name  string
	Realm string
	SDL   string
	// Model is the parsed SDL: the record types declared to the store,
	// and what the executable schema is built, and built again, from.
	Model *schema.Model
}

// Settings are an instance's per-instance switches.
type Settings struct {
	// AnonymousRequests lets calls without a token through (webhooks need it).
	AnonymousRequests bool `json:"anonymousRequests"`
	// AnonymousRegistration lets anonymous callers createAccount.
	AnonymousRegistration bool `json:"anonymousRegistration"`
	// UsersMayCreateAccounts lets users with a session createAccount.
	UsersMayCreateAccounts bool `json:"usersMayCreateAccounts"`
	// SessionLifetime is how long session tokens last, in seconds; 0 means
	// the default of 7 days.
	SessionLifetime int `json:"sessionLifetime"`
	// SessionIdleTimeout ends a session not used for this many seconds
	// (auth.Instance.SessionIdleTimeout); 0, the default, means sessions
	// end only at their lifetime or when revoked.
	SessionIdleTimeout int `json:"sessionIdleTimeout"`
	// Env holds values functions may read (by the names their @fn lists).
	Env map[string]string `json:"env"`
	// CORS says which web pages may call the instance's REST interface
	// from a browser.
	CORS CORS `json:"cors"`
	// Fetch lets the instance's functions call out with fetch(); off by
	// default.
	Fetch Fetch `json:"fetch"`
	// FunctionConcurrency is how many of the instance's function calls
	// may run at once (0: a quarter of the server's bound; fn.Invocation).
	FunctionConcurrency int `json:"functionConcurrency"`
	// FunctionMemory is the memory one function call may use, in bytes
	// (0: the server's default, 64 MiB). More than the server's maximum
	// (cored serve --function-memory-max, 256 MiB by default) is refused
	// when set (Directory.LimitFunctionMemory); a value stored before the
	// maximum was lowered is enforced at the maximum.
	FunctionMemory int64 `json:"functionMemory"`
	// RateLimit bounds the instance's requests through every door; nil:
	// the server's default (cored serve --rate-limit), none unless set.
	RateLimit *RateLimit `json:"rateLimit"`
	// Quota bounds the instance's records, their bytes and its function
	// calls per day (quota.go); the zero Quota bounds nothing.
	Quota Quota `json:"quota"`
	// SubscriptionConnections bounds the instance's open subscription
	// connections (event streams and WebSockets) in each process; 0:
	// DefaultSubscriptionConnections.
	SubscriptionConnections int `json:"subscriptionConnections"`
	// SubscriptionConnectionsPerAccount bounds the share of them one
	// caller holds (SubscriptionShares); 0: a tenth of
	// subscriptionConnections, rounded up.
	SubscriptionConnectionsPerAccount int `json:"subscriptionConnectionsPerAccount"`
	// Introspection says who may ask the schema about itself (__schema,
	// __type) and see graphql-go's suggestions in errors:
	// IntrospectionAdmin (also ""), IntrospectionAccounts or
	// IntrospectionAnyone.
	Introspection string `json:"introspection"`
	// SMTP is the instance's mail server (mail.go); nil: the instance
	// sends no mail (a reset or verification request is refused).
	SMTP *SMTP `json:"smtp"`
	// MailTemplates are the instance's own texts of the messages it
	// sends, by name (MailMessages); absent ones are the defaults.
	MailTemplates map[string]MailTemplate `json:"mailTemplates"`
	// RequireEmailVerification refuses logins of accounts whose e-mail
	// address is not verified.
	RequireEmailVerification bool `json:"requireEmailVerification"`
	// PublicURL is where clients reach the service (https://api.example.com),
	// the start of the links in the mail it sends; verification needs it.
	PublicURL string `json:"publicUrl"`
	// MaxFileSize is the largest file one upload part may hold, in bytes
	// (0: DefaultMaxFileSize). More than the server's maximum
	// (MaxFileSizeLimit) is refused.
	MaxFileSize int64 `json:"maxFileSize"`
	// AccountFields are the Account fields every account of the instance
	// may read on every Account record (username, so that a reference to
	// another account shows its name without a grant); none by default.
	// Only the listable ones (ListableAccountFields) may be named: a
	// password, e-mails, phones, tokens and secrets never.
	AccountFields []string `json:"accountFields"`
}

// ListableAccountFields are the Account fields accountFields may name.
var ListableAccountFields = []string{"username", "enabled", "verified"}

// checkAccountFields reports whether Settings.AccountFields names only
// listable Account fields, each once.
func (s Settings) checkAccountFields() error {
	if len(s.AccountFields) > len(ListableAccountFields) {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "accountFields lists at most %d fields (%s)", len(ListableAccountFields), strings.Join(ListableAccountFields, ", "))
	}
	for i, f := range s.AccountFields {
		lower := strings.ToLower(f)
		switch {
		case lower == "password" || lower == "emails" || lower == "phones" ||
			strings.Contains(lower, "token") || strings.Contains(lower, "secret") || strings.Contains(lower, "password"):
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "accountFields: Account.%s can never be readable by every account (passwords, e-mails, phones, tokens and secrets stay private)", f)
		case !slices.Contains(ListableAccountFields, f):
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "accountFields: %q is not an Account field that may be listed (%s)", f, strings.Join(ListableAccountFields, ", "))
		case slices.Contains(s.AccountFields[:i], f):
			return errcode.Wrap(errcode.BadRequest, ErrInvalid, "accountFields: %s is listed twice", f)
		}
	}
	return nil
}

// DefaultMaxFileSize is the largest file of an instance that sets no
// maxFileSize: 50 MiB.
const DefaultMaxFileSize = 50 << 20

// MaxFileSizeLimit is the most maxFileSize may be: 1 GiB (a File's size
// is a GraphQL Int, which holds less than 2 GiB).
const MaxFileSizeLimit = 1 << 30

// FileSizeLimit is the largest file one upload part may hold.
func (s Settings) FileSizeLimit() int64 {
	if s.MaxFileSize <= 0 {
		return DefaultMaxFileSize
	}
	return min(s.MaxFileSize, MaxFileSizeLimit)
}

// The values of Settings.Introspection.
const (
	// IntrospectionAdmin: the instance token only (and sessions of the
	// account it acts as). The default.
	IntrospectionAdmin = "admin"
	// IntrospectionAccounts: also every account's session.
	IntrospectionAccounts = "accounts"
	// IntrospectionAnyone: also anonymous callers, where the instance
	// accepts anonymous requests at all.
	IntrospectionAnyone = "anyone"
)

// checkIntrospection reports whether Settings.Introspection is one of its
// values ("" counts as IntrospectionAdmin).
func (s Settings) checkIntrospection() error {
	switch s.Introspection {
	case "", IntrospectionAdmin, IntrospectionAccounts, IntrospectionAnyone:
		return nil
	}
	return errcode.Wrap(errcode.BadRequest, ErrInvalid,
		"introspection must be %q (the instance token only, the default), %q (also account sessions) or %q (also anonymous callers)",
		IntrospectionAdmin, IntrospectionAccounts, IntrospectionAnyone)
}

// DefaultSubscriptionConnections is the bound of an instance's open
// subscription connections per process when its setting has none.
const DefaultSubscriptionConnections = 1000

// SubscriptionShares returns the bound of the instance's open
// subscription connections and one caller's share of it: an account's
// (its sessions together), an anonymous client address's; the instance
// token has no share of its own, only the instance's bound. The share is
// the setting subscriptionConnectionsPerAccount, else a tenth of the
// bound, rounded up: one account's connections leave room for others'.
func (s Settings) SubscriptionShares() (instance, perAccount int) {
	instance = s.SubscriptionConnections
	if instance <= 0 {
		instance = DefaultSubscriptionConnections
	}
	perAccount = s.SubscriptionConnectionsPerAccount
	if perAccount <= 0 {
		perAccount = (instance + 9) / 10
	}
	return instance, perAccount
}

// maxSubscriptionConnections bounds Settings.SubscriptionConnections.
const maxSubscriptionConnections = 1_000_000

// RateLimit is a token bucket: RequestsPerSecond on average, up to Burst
// at once.
type RateLimit struct {
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Burst             int     `json:"burst"`
}

// checkShares checks the settings that bound the instance's share of the
// server: rateLimit, functionConcurrency, functionMemory, quota,
// subscriptionConnections and subscriptionConnectionsPerAccount.
func (s Settings) checkShares() error {
	if s.FunctionConcurrency < 0 || s.FunctionConcurrency > maxFunctionConcurrency {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "functionConcurrency must be between 0 (a quarter of the server's bound) and %d", maxFunctionConcurrency)
	}
	if s.FunctionMemory != 0 && (s.FunctionMemory < minFunctionMemory || s.FunctionMemory > maxFunctionMemory) {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "functionMemory must be 0 (the server's default) or between %d (8 MiB) and %d (64 GiB) bytes", minFunctionMemory, int64(maxFunctionMemory))
	}
	if s.SubscriptionConnections < 0 || s.SubscriptionConnections > maxSubscriptionConnections {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "subscriptionConnections must be between 0 (the default, %d) and %d", DefaultSubscriptionConnections, maxSubscriptionConnections)
	}
	if instance, _ := s.SubscriptionShares(); s.SubscriptionConnectionsPerAccount < 0 || s.SubscriptionConnectionsPerAccount > instance {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid,
			"subscriptionConnectionsPerAccount must be between 0 (the default, a tenth of subscriptionConnections) and subscriptionConnections (%d)", instance)
	}
	if s.MaxFileSize < 0 || s.MaxFileSize > MaxFileSizeLimit {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "maxFileSize must be between 0 (the default, %d bytes) and %d bytes", DefaultMaxFileSize, MaxFileSizeLimit)
	}
	if err := s.Quota.Check(); err != nil {
		return err
	}
	return s.RateLimit.Check()
}

// maxFunctionConcurrency bounds Settings.FunctionConcurrency (the
// runtime caps it at its own bound).
const maxFunctionConcurrency = 10_000

// Bounds of Settings.FunctionMemory whatever the server (its own
// maximum is lower: Directory.LimitFunctionMemory).
const (
	minFunctionMemory = 8 << 20
	maxFunctionMemory = 64 << 30
)

// maxRate bounds RateLimit's figures.
const maxRate = 1_000_000

// Check reports whether a rate limit is usable: a positive rate and a
// burst of at least one request (0: the rate, rounded up), both at most
// a million.
func (r *RateLimit) Check() error {
	if r == nil {
		return nil
	}
	if !(r.RequestsPerSecond > 0 && r.RequestsPerSecond <= maxRate) {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "rateLimit.requestsPerSecond must be above 0 and at most %d", maxRate)
	}
	if r.Burst < 0 || r.Burst > maxRate {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "rateLimit.burst must be between 0 (the rate, rounded up) and %d", maxRate)
	}
	return nil
}

// BurstOrRate is the burst, or the rate rounded up when none is set.
func (r RateLimit) BurstOrRate() int {
	if r.Burst > 0 {
		return r.Burst
	}
	return int(math.Ceil(r.RequestsPerSecond))
}

// Fetch is an instance's outbound fetch policy for its functions.
type Fetch struct {
	// Enabled turns fetch on.
	Enabled bool `json:"enabled"`
	// AllowHosts are the hosts fetch may reach: a host name
	// ("api.stripe.com"), "*.example.com" for every subdomain of
	// example.com, or an IP address. Private, loopback, link-local and
	// other non-public addresses are refused whatever the list says.
	AllowHosts []string `json:"allowHosts"`
}

// maxFetchHosts bounds Fetch.AllowHosts.
const maxFetchHosts = 100

// MarshalJSON writes a nil AllowHosts as [].
func (f Fetch) MarshalJSON() ([]byte, error) {
	type plain Fetch
	if f.AllowHosts == nil {
		f.AllowHosts = []string{}
	}
	return json.Marshal(plain(f))
}

// Check reports whether every allowed host is a lower-case host name, a
// "*." wildcard of one, or an IP address (no scheme, port or path).
func (f Fetch) Check() error {
	if len(f.AllowHosts) > maxFetchHosts {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "fetch.allowHosts lists more than %d hosts", maxFetchHosts)
	}
	for _, h := range f.AllowHosts {
		name := strings.TrimPrefix(h, "*.")
		if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			continue
		}
		if checkDomain(name) != nil || name != h && !strings.Contains(name, ".") || h != strings.ToLower(h) {
			return errcode.Wrap(errcode.BadRequest, ErrInvalid,
				"fetch.allowHosts: %q is not a host: write a lower-case host name such as api.example.com, *.example.com for its subdomains, or an IP address (no scheme, port or path)", h)
		}
	}
	return nil
}

// CORS is an instance's cross-origin policy for /rest/v1.
type CORS struct {
	// AllowedOrigins are the origins whose pages may call, each as a
	// browser sends it: scheme://host[:port], lower case, no path (for
	// example https://app.example.com); "*" allows every origin. None:
	// no cross-origin calls.
	AllowedOrigins []string `json:"allowedOrigins"`
}

// maxOrigins bounds CORS.AllowedOrigins.
const maxOrigins = 100

// Allows reports whether a page of origin may call.
func (c CORS) Allows(origin string) bool {
	if origin == "" {
		return false
	}
	for _, o := range c.AllowedOrigins {
		if o == "*" || o == origin {
			return true
		}
	}
	return false
}

// check reports whether every allowed origin is "*" or an origin as a
// browser sends it.
func (c CORS) check() error {
	if len(c.AllowedOrigins) > maxOrigins {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid, "cors.allowedOrigins lists more than %d origins", maxOrigins)
	}
	for _, o := range c.AllowedOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.Scheme+"://"+u.Host != o || o != strings.ToLower(o) {
			return errcode.Wrap(errcode.BadRequest, ErrInvalid,
				"cors.allowedOrigins: %q is not an origin: write scheme://host[:port] in lower case with no path, such as https://app.example.com, or \"*\"", o)
		}
	}
	return nil
}

// Instance is a deployed release with its own domain, data and token.
// Its release pointer swaps atomically; everything else is replaced by
// building a new Instance value.
type Instance struct {
	ID     string
	Domain string
	App    string
	// AdminAccountID is the account the instance token acts as: records
	// written with the instance token have it as createdBy.
	AdminAccountID string
	Settings       Settings
	// TokenHash is SHA-256 of the instance token; the token itself is never
	// kept.
	TokenHash [32]byte
	// Created is when the instance was created (UTC).
	Created time.Time

	release atomic.Pointer[Release]
}

// Release returns the release the instance serves now. A request reads it
// once and keeps it, so it finishes on the schema it started with.
func (i *Instance) Release() *Release { return i.release.Load() }

// SetRelease swaps the release served for new requests.
func (i *Instance) SetRelease(r *Release) { i.release.Store(r) }

// clone returns a copy of i serving the same release, for a change that
// publishes a new Instance value.
func (i *Instance) clone() *Instance {
	n := &Instance{
		ID:             i.ID,
		Domain:         i.Domain,
		App:            i.App,
		AdminAccountID: i.AdminAccountID,
		Settings:       i.Settings.clone(),
		TokenHash:      i.TokenHash,
		Created:        i.Created,
	}
	n.SetRelease(i.Release())
	return n
}

// clone returns a copy of s that shares no map with it.
func (s Settings) clone() Settings {
	s.Env = maps.Clone(s.Env)
	s.CORS.AllowedOrigins = slices.Clone(s.CORS.AllowedOrigins)
	s.Fetch.AllowHosts = slices.Clone(s.Fetch.AllowHosts)
	s.AccountFields = slices.Clone(s.AccountFields)
	if s.RateLimit != nil {
		r := *s.RateLimit
		s.RateLimit = &r
	}
	s.cloneMail()
	return s
}

// equal reports whether two settings are the same (a nil and an empty env
// are, and so are a nil and an empty list of origins).
func (s Settings) equal(o Settings) bool {
	if len(s.Env) == 0 && len(o.Env) == 0 {
		s.Env, o.Env = nil, nil
	}
	if len(s.CORS.AllowedOrigins) == 0 && len(o.CORS.AllowedOrigins) == 0 {
		s.CORS.AllowedOrigins, o.CORS.AllowedOrigins = nil, nil
	}
	if len(s.Fetch.AllowHosts) == 0 && len(o.Fetch.AllowHosts) == 0 {
		s.Fetch.AllowHosts, o.Fetch.AllowHosts = nil, nil
	}
	if len(s.AccountFields) == 0 && len(o.AccountFields) == 0 {
		s.AccountFields, o.AccountFields = nil, nil
	}
	return reflect.DeepEqual(s, o)
}

// Patch applies a JSON object of settings to a copy of s: fields present
// are set, absent (or null) ones keep their value, but rateLimit: null
// removes the instance's own limit and quota: null every bound of its
// quota; env replaces the whole env ({} clears it), while rateLimit and
// quota take the figures they name and keep the others. Unknown fields
// are an error naming them.
func (s Settings) Patch(raw json.RawMessage) (Settings, error) {
	out := s.clone()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return s, errcode.New(errcode.BadRequest, "settings: not a JSON object")
	}
	for k, v := range fields {
		if string(v) == "null" {
			delete(fields, k)
			switch k {
			case "rateLimit":
				out.RateLimit = nil
			case "quota":
				out.Quota = Quota{}
			case "smtp":
				out.SMTP = nil
			}
		}
	}
	if _, ok := fields["env"]; ok {
		out.Env = nil
	}
	clean, _ := json.Marshal(fields)
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return s, errcode.New(errcode.BadRequest, "%s", errcode.DescribeJSON(err))
	}
	if out.SessionLifetime < 0 {
		return s, errcode.New(errcode.BadRequest, "settings: sessionLifetime must not be negative")
	}
	if out.SessionIdleTimeout < 0 {
		return s, errcode.New(errcode.BadRequest, "settings: sessionIdleTimeout must not be negative")
	}

	if len(out.Env) == 0 {
		out.Env = nil
	}
	if err := out.Fetch.Check(); err != nil {
		return s, err
	}
	if err := out.checkShares(); err != nil {
		return s, err
	}
	if err := out.checkIntrospection(); err != nil {
		return s, err
	}
	if err := out.checkMail(); err != nil {
		return s, err
	}
	if err := out.checkAccountFields(); err != nil {
		return s, err
	}
	return out, nil
}

type ctxKey struct{}

// WithInstance returns ctx carrying the instance a request is for.
func WithInstance(ctx context.Context, i *Instance) context.Context {
	return context.WithValue(ctx, ctxKey{}, i)
}

// FromContext returns the instance of the request, or nil.
func FromContext(ctx context.Context) *Instance {
	i, _ := ctx.Value(ctxKey{}).(*Instance)
	return i
}
