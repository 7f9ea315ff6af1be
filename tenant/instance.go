package tenant

import (
	"context"
	"maps"
	"sync/atomic"
	"time"

	"github.com/corehq/core/schema"
)

// Compiled is what a release's schema compiles to (a *gql.Schema). It is
// built once per release and shared by every instance running the release.
type Compiled interface {
	Model() *schema.Model
}

// Compiler turns a validated model into its Compiled form. cmd/ injects
// gql's; tenant itself knows nothing of GraphQL execution.
type Compiler func(m *schema.Model) (Compiled, error)

// Release is an immutable named version of an app: its SDL and compiled
// schema.
type Release struct {
	App   string
	Name  string
	Realm string
	SDL   string
	// Compiled serves the release; shared by its instances.
	Compiled Compiled
}

// Settings are an instance's per-instance switches.
type Settings struct {
	// AnonymousRequests lets calls without a token through (webhooks need it).
	AnonymousRequests bool `json:"anonymousRequests"`
	// AnonymousRegistration lets anonymous callers createAccount.
	AnonymousRegistration bool `json:"anonymousRegistration"`
	// Env holds values functions may read (by the names their @fn lists).
	Env map[string]string `json:"env,omitempty"`
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
	return s
}

// equal reports whether two settings are the same (a nil and an empty env
// are).
func (s Settings) equal(o Settings) bool {
	return s.AnonymousRequests == o.AnonymousRequests &&
		s.AnonymousRegistration == o.AnonymousRegistration &&
		maps.Equal(s.Env, o.Env)
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
