package tenant

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
)

// Store document kinds the directory keeps.
const (
	docRelease  = "release"  // key "<app>/<release>"
	docInstance = "instance" // key domain
)

// Directory owns the apps, releases and instances of the service. Lookup is
// lock-free; every change is serialised, persisted, then published. Safe
// for concurrent use.
// Releases keep their parsed model; compiling it to an executable schema
// is the engine's (gql.Engine), which keeps a bounded number compiled.
type Directory struct {
	st     store.Store
	limits schema.Limits

	mu     sync.Mutex // serialises changes
	state  atomic.Pointer[state]
	loaded atomic.Bool

	// Coherence between processes sharing the store (sync.go); guarded
	// by mu.
	process    string            // this directory's key among the version marks
	seen       map[string]string // the marks as of the last load
	bumpFailed bool              // the last mark was not written

	// onDelete clean up after a deleted instance (OnDelete); set before
	// serving, read under mu.
	onDelete []func(ctx context.Context, instanceID string) error

	// sealer seals the instances' env values in the store (secrets.go);
	// nil keeps them in clear (tests of the directory alone).
	sealer Sealer
	// functionMemoryMax bounds Settings.FunctionMemory (0: only
	// maxFunctionMemory does); LimitFunctionMemory.
	functionMemoryMax atomic.Int64
}

// state is one immutable snapshot: maps are never changed once published.
type state struct {
	releases  map[string]*Release  // by releaseKey
	instances map[string]*Instance // by normalised domain
	byID      map[string]*Instance // the same instances by id (put and drop keep both)
}

func newState(releases, instances int) *state {
	return &state{releases: make(map[string]*Release, releases), instances: make(map[string]*Instance, instances),
		byID: make(map[string]*Instance, instances)}
}

func (s *state) clone() *state {
	return &state{releases: maps.Clone(s.releases), instances: maps.Clone(s.instances), byID: maps.Clone(s.byID)}
}

// put serves inst at domain (replacing what served it).
func (s *state) put(domain string, inst *Instance) {
	if old, ok := s.instances[domain]; ok {
		delete(s.byID, old.ID)
	}
	s.instances[domain] = inst
	s.byID[inst.ID] = inst
}

// drop stops serving domain.
func (s *state) drop(domain string) {
	if old, ok := s.instances[domain]; ok {
		delete(s.byID, old.ID)
		delete(s.instances, domain)
	}
}

// runners returns the domains of the instances running rel, sorted.
func (s *state) runners(rel *Release) []string {
	var ds []string
	for d, inst := range s.instances {
		if r := inst.Release(); r.App == rel.App && r.Name == rel.Name {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	return ds
}

func releaseKey(app, release string) string { return app + "/" + release }

// Option configures a Directory.
type Option func(*Directory)

// NewDirectory returns an empty directory; Load fills it from st. SDL is
// parsed with schema.DefaultLimits.
func NewDirectory(st store.Store, opts ...Option) *Directory {
	r := &Directory{
		st:      st,
		limits:  schema.DefaultLimits(),
		process: store.NewID(),
	}
	for _, o := range opts {
		o(r)
	}
	r.state.Store(newState(0, 0))
	return r
}

// releaseDoc is a release as stored.
type releaseDoc struct {
	App     string    `json:"app"`
	Release string    `json:"release"`
	Realm   string    `json:"realm"`
	Schema  string    `json:"schema"`
	Updated time.Time `json:"updated"`
}

// instanceDoc is an instance as stored. TokenHash is hex SHA-256.
// SealedEnv is Settings.Env sealed (secrets.go): stored, Settings.Env is
// empty unless an older version wrote it in clear.
type instanceDoc struct {
	ID             string   `json:"id"`
	Domain         string   `json:"domain"`
	App            string   `json:"app"`
	Release        string   `json:"release"`
	AdminAccountID string   `json:"adminAccountId"`
	TokenHash      string   `json:"tokenHash"`
	Settings       Settings `json:"settings"`
	SealedEnv      string   `json:"sealedEnv,omitempty"`
	// SealedSMTPPassword is Settings.SMTP.Password sealed (secrets.go).
	SealedSMTPPassword string    `json:"sealedSmtpPassword,omitempty"`
	Created            time.Time `json:"created"`
}

func docOf(inst *Instance) instanceDoc {
	rel := inst.Release()
	return instanceDoc{
		ID:             inst.ID,
		Domain:         inst.Domain,
		App:            inst.App,
		Release:        rel.Name,
		AdminAccountID: inst.AdminAccountID,
		TokenHash:      hex.EncodeToString(inst.TokenHash[:]),
		Settings:       inst.Settings,
		Created:        inst.Created,
	}
}

// Load reads every release and instance from the store, parses each
// release once and declares each instance's record types to the store.
// It replaces whatever the directory held (reusing what did not change, as
// a refresh does). A stored release that no longer parses, or an instance whose
// release is missing, fails Load with an error naming it.
func (r *Directory) Load(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	// The marks first: a change made while loading shows as a new mark.
	marks, err := r.marks(ctx)
	if err != nil {
		return err
	}
	if err := r.reload(ctx); err != nil {
		return err
	}
	r.startMarks(ctx, marks)
	r.loaded.Store(true)
	return nil
}

// Loaded reports whether Load has completed (for /readyz).
func (r *Directory) Loaded() bool { return r.loaded.Load() }

// Lookup returns the instance serving domain (case-insensitive). It takes
// no lock and does not allocate for a lower-case domain.
func (r *Directory) Lookup(domain string) (*Instance, bool) {
	inst, ok := r.state.Load().instances[NormalizeDomain(domain)]
	return inst, ok
}

// LookupID returns the instance whose id is id (a file's download path
// names its instance by id). Like Lookup, it takes no lock.
func (r *Directory) LookupID(id string) (*Instance, bool) {
	inst, ok := r.state.Load().byID[id]
	return inst, ok
}

// Instance is Lookup for the admin API: a missing instance is a NOT_FOUND
// error (ErrNotFound) naming the domain.
func (r *Directory) Instance(domain string) (*Instance, error) {
	inst, ok := r.Lookup(domain)
	if !ok {
		return nil, unknownInstance(NormalizeDomain(domain))
	}
	return inst, nil
}

// Release returns a release of an app.
func (r *Directory) Release(app, name string) (*Release, bool) {
	rel, ok := r.state.Load().releases[releaseKey(app, name)]
	return rel, ok
}

// Holds reports whether rel is the release the directory serves under its
// app and name (false once it was replaced, or for a release it never
// made).
func (r *Directory) Holds(rel *Release) bool {
	return r.state.Load().releases[releaseKey(rel.App, rel.Name)] == rel
}

// Releases returns every release, sorted by app then name.
func (r *Directory) Releases() []*Release {
	s := r.state.Load()
	rels := slices.Collect(maps.Values(s.releases))
	slices.SortFunc(rels, func(a, b *Release) int {
		return cmp.Or(strings.Compare(a.App, b.App), strings.Compare(a.Name, b.Name))
	})
	return rels
}

// Runners returns the domains of the instances running a release, sorted.
func (r *Directory) Runners(rel *Release) []string { return r.state.Load().runners(rel) }

// Instances returns every instance, sorted by domain.
func (r *Directory) Instances() []*Instance {
	s := r.state.Load()
	out := make([]*Instance, 0, len(s.instances))
	for _, d := range slices.Sorted(maps.Keys(s.instances)) {
		out = append(out, s.instances[d])
	}
	return out
}

// PutResult says what PutRelease did.
type PutResult int

const (
	// Created: the release is new.
	Created PutResult = iota
	// Replaced: the release existed, no instance ran it, and it changed.
	Replaced
	// Unchanged: the release already had this realm and SDL.
	Unchanged
)

func (p PutResult) String() string {
	switch p {
	case Created:
		return "created"
	case Replaced:
		return "replaced"
	default:
		return "unchanged"
	}
}

// PutRelease publishes a release of an app: it validates sdl (an
// *errcode.Error with code BAD_REQUEST wrapping schema.Errors lists each
// problem with its line and column) and stores it. The
// same realm and schema again (comments, white space and descriptions
// aside: schema.Same) is Unchanged; a different one is refused with
// CONFLICT (ErrReleaseInUse) while an instance runs the release, since
// releases are immutable once in use. An empty realm is DefaultRealm.
func (r *Directory) PutRelease(ctx context.Context, app, name, realm, sdl string) (*Release, PutResult, error) {
	if realm == "" {
		realm = DefaultRealm
	}
	for _, c := range [...]struct{ what, s string }{{"app", app}, {"release", name}, {"realm", realm}} {
		if err := checkName(c.what, c.s); err != nil {
			return nil, 0, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state.Load()
	key := releaseKey(app, name)
	result := Created
	if old := s.releases[key]; old != nil {
		if old.Realm == realm && schema.Same(old.SDL, sdl, r.limits) {
			// Comments, white space and descriptions aside, it is the
			// same schema: the stored text stays.
			return old, Unchanged, nil
		}
		if ds := s.runners(old); len(ds) > 0 {
			return nil, 0, errcode.Wrap(errcode.Conflict, ErrReleaseInUse,
				"release %s is immutable while instances run it (%s): publish a new release", key, strings.Join(ds, ", "))
		}
		result = Replaced
	}
	doc, err := json.Marshal(releaseDoc{App: app, Release: name, Realm: realm, Schema: sdl, Updated: time.Now().UTC()})
	if err != nil {
		return nil, 0, fmt.Errorf("tenant: encoding release %s: %w", key, err)
	}
	rel, err := r.build(app, name, realm, sdl)
	if err != nil {
		return nil, 0, err
	}
	n := s.clone()
	n.releases[key] = rel
	if err := r.st.PutDoc(ctx, docRelease, key, doc); err != nil {
		return nil, 0, fmt.Errorf("tenant: storing release %s: %w", key, err)
	}
	r.bump(ctx)
	r.state.Store(n)
	return rel, result, nil
}

// build parses and validates a release.
func (r *Directory) build(app, name, realm, sdl string) (*Release, error) {
	m, err := schema.Parse(sdl, r.limits)
	if err != nil {
		var errs schema.Errors
		if errors.As(err, &errs) {
			return nil, &errcode.Error{
				Code:    errcode.BadRequest,
				Message: "invalid schema:\n" + errs.Error(),
				Err:     fmt.Errorf("%w: %w", ErrInvalid, errs),
			}
		}
		return nil, fmt.Errorf("tenant: parsing release %s/%s: %w", app, name, err)
	}
	return &Release{App: app, Name: name, Realm: realm, SDL: sdl, Model: m}, nil
}

// InstanceSpec describes an instance to create.
type InstanceSpec struct {
	Domain   string
	App      string
	Release  string
	Settings Settings
}

// CreateInstance deploys a release on a new domain. It generates the
// instance id, the instance token (returned once; only its hash is kept)
// and the instance's admin account, declares the release's record types
// to the store, and stores the instance. A taken domain is CONFLICT
// (ErrExists), a missing app or release NOT_FOUND (ErrNotFound). On failure
// nothing stays in the store.
func (r *Directory) CreateInstance(ctx context.Context, spec InstanceSpec) (inst *Instance, token string, err error) {
	return r.createInstance(ctx, spec, "", nil)
}

// ImportInstance creates an instance as CreateInstance does, but with
// its records from load (an import: backup.Import) instead of a new admin
// account: adminAccountID names the admin account among them. load runs
// before the directory's lock is taken (an import may take minutes), into
// an instance id nobody knows yet, so nothing of it is visible until it
// has succeeded; when it fails, or the domain is taken meanwhile, what it
// wrote is dropped.
func (r *Directory) ImportInstance(ctx context.Context, spec InstanceSpec, adminAccountID string,
	load func(ctx context.Context, instanceID string) error) (*Instance, string, error) {
	if adminAccountID == "" {
		return nil, "", errcode.Wrap(errcode.BadRequest, ErrInvalid, "an imported instance needs its admin account's id")
	}
	return r.createInstance(ctx, spec, adminAccountID, load)
}

// checkSpec validates an instance to create and returns its domain,
// normalized.
func (r *Directory) checkSpec(spec InstanceSpec) (string, error) {
	domain := NormalizeDomain(spec.Domain)
	for _, err := range []error{
		checkDomain(domain), checkName("app", spec.App), checkName("release", spec.Release),
		checkEnv(spec.Settings.Env), spec.Settings.CORS.check(), spec.Settings.checkShares(),
		spec.Settings.checkMail(), spec.Settings.checkIntrospection(), spec.Settings.checkAccountFields(), r.checkFunctionMemory(spec.Settings.FunctionMemory),
	} {
		if err != nil {
			return "", err
		}
	}
	return domain, nil
}

// placeFor returns the release of a new instance at domain: CONFLICT when
// the domain is taken, NOT_FOUND when the release is missing.
func (r *Directory) placeFor(s *state, domain string, spec InstanceSpec) (*Release, error) {
	if _, ok := s.instances[domain]; ok {
		return nil, errcode.Wrap(errcode.Conflict, ErrExists, "domain %s is already taken by an instance", domain)
	}
	rel := s.releases[releaseKey(spec.App, spec.Release)]
	if rel == nil {
		return nil, r.missingRelease(s, spec.App, spec.Release)
	}
	return rel, nil
}

func (r *Directory) createInstance(ctx context.Context, spec InstanceSpec, adminAccountID string,
	load func(ctx context.Context, instanceID string) error) (inst *Instance, token string, err error) {
	domain, err := r.checkSpec(spec)
	if err != nil {
		return nil, "", err
	}
	id := store.NewID()
	// Nothing half-made stays: the instance id is new, so its data is
	// only what this call wrote.
	drop := func(err error) error {
		if derr := r.st.DropInstance(context.WithoutCancel(ctx), id); derr != nil {
			err = errors.Join(err, derr)
		}
		return fmt.Errorf("tenant: creating instance %s: %w", domain, err)
	}
	var declared *Release // the release whose types are declared already
	if load != nil {
		rel, err := r.placeFor(r.state.Load(), domain, spec)
		if err != nil {
			return nil, "", err
		}
		declared = rel
		if err := r.st.Declare(ctx, id, Specs(rel.Model)); err != nil {
			return nil, "", drop(err)
		}
		if err := load(ctx, id); err != nil {
			return nil, "", drop(err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state.Load()
	rel, err := r.placeFor(s, domain, spec)
	if err != nil {
		if load != nil {
			err = drop(err)
		}
		return nil, "", err
	}

	token, hash := auth.NewToken()
	inst = &Instance{
		ID:             id,
		Domain:         domain,
		App:            spec.App,
		AdminAccountID: cmp.Or(adminAccountID, store.NewID()),
		Settings:       spec.Settings.clone(),
		TokenHash:      hash,
		Created:        time.Now().UTC().Truncate(time.Millisecond), // what every store keeps (MongoDB: milliseconds)
	}
	inst.SetRelease(rel)
	doc, err := r.encodeInstance(docOf(inst))
	if err != nil {
		return nil, "", drop(err)
	}
	if rel != declared {
		// Declared again after a load only when the release was replaced
		// meanwhile: a Declare reads what it must index and claim.
		err = r.st.Declare(ctx, inst.ID, Specs(rel.Model))
	}
	if err == nil && load == nil {
		_, err = r.st.Write(ctx, inst.ID, []store.Op{{
			Kind:      store.OpUpsert,
			Type:      "Account",
			ID:        inst.AdminAccountID,
			Set:       map[string]any{"enabled": true, "verified": true},
			Now:       inst.Created,
			CreatedBy: inst.AdminAccountID,
		}}, store.Quota{})
	}
	if err == nil {
		err = r.st.PutDoc(ctx, docInstance, domain, doc)
	}
	if err != nil {
		return nil, "", drop(err)
	}
	r.bump(ctx)
	n := s.clone()
	n.put(domain, inst)
	r.state.Store(n)
	return inst, token, nil
}

// missingRelease is the NOT_FOUND error for app/release, saying which part
// is missing.
func (r *Directory) missingRelease(s *state, app, release string) error {
	for _, rel := range s.releases {
		if rel.App == app {
			return errcode.Wrap(errcode.NotFound, ErrNotFound, "app %s has no release %s", app, release)
		}
	}
	return errcode.Wrap(errcode.NotFound, ErrNotFound, "app %s does not exist: publish a release of it first", app)
}

// heldInstance returns the state and its instance at domain (normalized);
// NOT_FOUND when there is none. The caller holds r.mu, so the state stays
// the current one until it stores the next.
func (r *Directory) heldInstance(domain string) (*state, *Instance, error) {
	s := r.state.Load()
	inst := s.instances[domain]
	if inst == nil {
		return nil, nil, unknownInstance(domain)
	}
	return s, inst, nil
}

// unknownInstance is the NOT_FOUND error for a domain.
func unknownInstance(domain string) error {
	return errcode.Wrap(errcode.NotFound, ErrNotFound, "no instance has the domain %s", domain)
}

// Change is a partial update of an instance; nil fields keep their value.
type Change struct {
	// Release moves the instance to another release of its app.
	Release *string
	// Settings is a JSON object of settings applied with Settings.Patch.
	Settings json.RawMessage
	// Force moves to Release even when stored records would not survive
	// the change (checkBreaking); they keep their values as stored.
	Force bool
}

// UpdateInstance applies a change. A new release is declared to the store,
// then served to new requests (Instance.SetRelease); requests in flight
// finish on the release they loaded. Settings changes publish a new
// Instance value. It returns the instance as it is afterwards.
func (r *Directory) UpdateInstance(ctx context.Context, domain string, ch Change) (*Instance, error) {
	domain = NormalizeDomain(domain)
	if ch.Release != nil {
		if err := checkName("release", *ch.Release); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, inst, err := r.heldInstance(domain)
	if err != nil {
		return nil, err
	}
	cur := inst.Release()
	rel := cur
	if ch.Release != nil && *ch.Release != cur.Name {
		if rel = s.releases[releaseKey(inst.App, *ch.Release)]; rel == nil {
			return nil, r.missingRelease(s, inst.App, *ch.Release)
		}
	}
	set := inst.Settings
	if len(ch.Settings) > 0 {
		var err error
		if set, err = inst.Settings.Patch(ch.Settings); err != nil {
			return nil, err
		}
		if err := checkEnv(set.Env); err != nil {
			return nil, err
		}
		if err := set.CORS.check(); err != nil {
			return nil, err
		}
		// Only a changed value: an instance set before the maximum was
		// lowered keeps its other settings changeable.
		if set.FunctionMemory != inst.Settings.FunctionMemory {
			if err := r.checkFunctionMemory(set.FunctionMemory); err != nil {
				return nil, err
			}
		}
	}
	settingsChanged := !set.equal(inst.Settings)
	if rel == cur && !settingsChanged {
		return inst, nil
	}

	next := inst
	if settingsChanged {
		next = inst.clone()
		next.Settings = set
	}
	// The stored document must name the new release before it is served,
	// but inst must not serve it yet: build the document by hand.
	d := docOf(inst)
	d.Release, d.Settings = rel.Name, set
	if rel != cur {
		if !ch.Force {
			if err := r.checkBreaking(ctx, inst, cur, rel); err != nil {
				return nil, err
			}
		}
		if err := r.st.Declare(ctx, inst.ID, Specs(rel.Model)); err != nil {
			return nil, fmt.Errorf("tenant: instance %s: declaring release %s: %w", domain, rel.Name, err)
		}
	}
	if err := r.putInstanceDoc(ctx, d); err != nil {
		return nil, err
	}
	next.SetRelease(rel)
	if next != inst {
		n := s.clone()
		n.put(domain, next)
		r.state.Store(n)
	}
	return next, nil
}

// RotateToken gives an instance a new token and returns the instance and
// the token; the old token stops working at once.
func (r *Directory) RotateToken(ctx context.Context, domain string) (*Instance, string, error) {
	domain = NormalizeDomain(domain)
	r.mu.Lock()
	defer r.mu.Unlock()
	s, inst, err := r.heldInstance(domain)
	if err != nil {
		return nil, "", err
	}
	token, hash := auth.NewToken()
	next := inst.clone()
	next.TokenHash = hash
	if err := r.putInstanceDoc(ctx, docOf(next)); err != nil {
		return nil, "", err
	}
	n := s.clone()
	n.put(domain, next)
	r.state.Store(n)
	return next, token, nil
}

// OnDelete registers f to run when this directory deletes an instance,
// after its records are dropped: for per-instance state the store keeps
// outside the records (cmd/ registers the function log's Clear). Register
// before serving.
func (r *Directory) OnDelete(f func(ctx context.Context, instanceID string) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onDelete = append(r.onDelete, f)
}

// LimitFunctionMemory sets the most an instance's functionMemory setting
// may be: the function runtime's maximum (fn.Config.MaxMemory, cored
// serve --function-memory-max). A setting above it is refused when it is
// set, so that what an instance shows is what its calls get. Call before
// serving.
func (r *Directory) LimitFunctionMemory(max int64) {
	r.functionMemoryMax.Store(max)
}

// checkFunctionMemory refuses a functionMemory setting above the
// server's maximum (LimitFunctionMemory).
func (r *Directory) checkFunctionMemory(asked int64) error {
	if max := r.functionMemoryMax.Load(); max > 0 && asked > max {
		return errcode.Wrap(errcode.BadRequest, ErrInvalid,
			"functionMemory %d (%s) is above this server's maximum of %d (%s) bytes per function call (cored serve --function-memory-max): ask for at most that, or 0 for the server's default",
			asked, sizeText(asked), max, sizeText(max))
	}
	return nil
}

// sizeText writes a number of bytes in the largest binary unit that
// divides it (256 MiB), or with one decimal of MiB.
func sizeText(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// DeleteInstance removes an instance: its document first (so it stops
// serving), then every record it holds, then what the OnDelete functions
// clean up. It returns the removed instance.
func (r *Directory) DeleteInstance(ctx context.Context, domain string) (*Instance, error) {
	domain = NormalizeDomain(domain)
	r.mu.Lock()
	defer r.mu.Unlock()
	s, inst, err := r.heldInstance(domain)
	if err != nil {
		return nil, err
	}
	if err := r.st.DeleteDoc(ctx, docInstance, domain); err != nil {
		return nil, fmt.Errorf("tenant: deleting instance %s: %w", domain, err)
	}
	r.bump(ctx)
	n := s.clone()
	n.drop(domain)
	r.state.Store(n)
	// The id is never reused, so records left by a failure here are
	// unreachable; the error still reports them.
	if err := r.st.DropInstance(context.WithoutCancel(ctx), inst.ID); err != nil {
		return nil, fmt.Errorf("tenant: instance %s removed, but dropping its records failed: %w", domain, err)
	}
	for _, f := range r.onDelete {
		if err := f(context.WithoutCancel(ctx), inst.ID); err != nil {
			return nil, fmt.Errorf("tenant: instance %s removed, but cleaning up after it failed: %w", domain, err)
		}
	}
	return inst, nil
}

func (r *Directory) putInstanceDoc(ctx context.Context, d instanceDoc) error {
	raw, err := r.encodeInstance(d)
	if err != nil {
		return err
	}
	if err := r.st.PutDoc(ctx, docInstance, d.Domain, raw); err != nil {
		return fmt.Errorf("tenant: storing instance %s: %w", d.Domain, err)
	}
	r.bump(ctx)
	return nil
}
