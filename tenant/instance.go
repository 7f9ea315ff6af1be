package tenant

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/corehq/core/errcode"
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
	// UsersMayCreateAccounts lets users with a session createAccount.
	UsersMayCreateAccounts bool `json:"usersMayCreateAccounts"`
	// SessionLifetime is how long session tokens last, in seconds; 0 means
	// the default of 7 days.
	SessionLifetime int `json:"sessionLifetime"`
	// Env holds values functions may read (by the names their @fn lists).
	Env map[string]string `json:"env"`
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
	if len(s.Env) == 0 && len(o.Env) == 0 {
		s.Env, o.Env = nil, nil
	}
	return reflect.DeepEqual(s, o)
}

// Patch applies a JSON object of settings to a copy of s: fields present
// are set, absent (or null) ones keep their value; env replaces the whole
// env ({} clears it). Unknown fields are an error naming them.
func (s Settings) Patch(raw json.RawMessage) (Settings, error) {
	out := s.clone()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return s, errcode.New(errcode.BadRequest, "settings: not a JSON object")
	}
	for k, v := range fields {
		if string(v) == "null" {
			delete(fields, k)
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
	if len(out.Env) == 0 {
		out.Env = nil
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
