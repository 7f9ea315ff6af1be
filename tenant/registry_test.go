package tenant_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt"
	"github.com/corehq/core/tenant"
)

const (
	bookstoreSDL = `type Author { name: String age: Int bestbook: Book booklist: [Book!] }
type Book @indices(sets: [["price"]]) { title: String authorid: Int price: Float }`
	bookstoreV2SDL = bookstoreSDL + "\ntype Shelf { label: String @unique }"
)

// compiled is what the test compiler builds.
type compiled struct{ m *schema.Model }

func (c *compiled) Model() *schema.Model { return c.m }

// harness is a registry over a real bolt store that records what the
// registry asks of it.
type harness struct {
	t        testing.TB
	st       *spyStore
	compiles atomic.Int32 // the builds of compiled schemas
	// gate, when set before the calls that compile, holds every build
	// until it is closed; each build first sends on entered.
	gate, entered chan struct{}
	reg           *tenant.Registry
}

// spyStore records Declare calls and can fail PutDoc.
type spyStore struct {
	store.Store
	mu         sync.Mutex
	declared   map[string][]store.TypeSpec // by instance id, the last call
	failPutDoc string                      // a kind whose PutDoc fails
}

func (s *spyStore) Declare(ctx context.Context, inst string, types []store.TypeSpec) error {
	s.mu.Lock()
	s.declared[inst] = types
	s.mu.Unlock()
	return s.Store.Declare(ctx, inst, types)
}

func (s *spyStore) PutDoc(ctx context.Context, kind, key string, doc []byte) error {
	if kind == s.failPutDoc {
		return errors.New("disk full")
	}
	return s.Store.PutDoc(ctx, kind, key, doc)
}

func (s *spyStore) lastDeclared(inst string) []store.TypeSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.declared[inst]
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	cfg := bolt.DefaultConfig()
	cfg.NoSync = true
	st, err := bolt.Open(filepath.Join(t.TempDir(), "core.db"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, st: &spyStore{Store: st, declared: map[string][]store.TypeSpec{}}}
	h.reg = h.newRegistry()
	return h
}

// newRegistry returns a fresh registry over the harness's store.
func (h *harness) newRegistry() *tenant.Registry {
	return tenant.NewRegistry(h.st, func(m *schema.Model) (tenant.Compiled, error) {
		h.compiles.Add(1)
		if h.gate != nil {
			h.entered <- struct{}{}
			<-h.gate
		}
		return &compiled{m}, nil
	}, auth.NewToken)
}

func (h *harness) putRelease(name, sdl string) *tenant.Release {
	h.t.Helper()
	rel, _, err := h.reg.PutRelease(context.Background(), "bookstore", name, "", sdl)
	if err != nil {
		h.t.Fatalf("PutRelease %s: %v", name, err)
	}
	return rel
}

func (h *harness) create(domain, release string) (*tenant.Instance, string) {
	h.t.Helper()
	inst, token, err := h.reg.CreateInstance(context.Background(), tenant.InstanceSpec{Domain: domain, App: "bookstore", Release: release})
	if err != nil {
		h.t.Fatalf("CreateInstance %s: %v", domain, err)
	}
	return inst, token
}

// compiledOf returns the compiled schema of rel, failing the test on error.
func compiledOf(t testing.TB, rel *tenant.Release) tenant.Compiled {
	t.Helper()
	c, err := rel.Compiled()
	if err != nil {
		t.Fatalf("release %s: Compiled: %v", rel.Name, err)
	}
	return c
}

// code returns the errcode of err ("" for nil).
func code(err error) errcode.Code {
	if err == nil {
		return ""
	}
	return errcode.As(err).Code
}

func TestReleaseCompiledOnceAndShared(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.putRelease("v1", bookstoreSDL)
	a, _ := h.create("a.test", "v1")
	b, _ := h.create("b.test", "v1")
	if a.Release() != b.Release() || compiledOf(t, a.Release()) != compiledOf(t, b.Release()) {
		t.Errorf("instances of one release hold different releases or compiled schemas")
	}
	if n := h.compiles.Load(); n != 1 {
		t.Errorf("compiled %d times, want once", n)
	}

	// Loading from the store compiles each release once again and shares
	// it the same way.
	h.compiles.Store(0)
	reg := h.newRegistry()
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	la, _ := reg.Lookup("a.test")
	lb, _ := reg.Lookup("b.test")
	if la == nil || lb == nil || compiledOf(t, la.Release()) != compiledOf(t, lb.Release()) {
		t.Fatalf("after Load: a=%v b=%v, want both with one compiled schema", la, lb)
	}
	if n := h.compiles.Load(); n != 1 {
		t.Errorf("Load compiled %d times, want once", n)
	}
}

// putReleases puts n releases v1…vn of one SDL, in order.
func (h *harness) putReleases(n int) []*tenant.Release {
	h.t.Helper()
	rels := make([]*tenant.Release, n)
	for i := range rels {
		rels[i] = h.putRelease(fmt.Sprintf("v%d", i+1), bookstoreSDL)
	}
	return rels
}

// TestCompiledLimit bounds the compiled schemas to 2 of 4 releases: an
// evicted release is compiled again when asked for, once, and its
// instances share the new schema.
func TestCompiledLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	h.reg.SetCompiledLimit(2)
	for i := range 4 {
		h.putRelease(fmt.Sprintf("v%d", i+1), bookstoreSDL)
		if n := h.reg.CompiledCount(); n > 2 {
			t.Fatalf("after %d releases, %d are compiled; want at most 2", i+1, n)
		}
	}
	if n := h.reg.CompiledCount(); n != 2 {
		t.Fatalf("%d releases compiled, want 2", n)
	}
	v1, _ := h.reg.Release("bookstore", "v1")
	v4, _ := h.reg.Release("bookstore", "v4")
	// Creating instances declares the model; it compiles nothing.
	a, _ := h.create("a.test", "v1")
	b, _ := h.create("b.test", "v1")
	builds := h.compiles.Load()

	c := compiledOf(t, a.Release()) // v1 was evicted: the oldest build
	if n := h.compiles.Load() - builds; n != 1 {
		t.Errorf("asking for evicted v1 built %d schemas, want 1", n)
	}
	if c.Model() != v1.Model {
		t.Error("the schema compiled again is not built from v1's model")
	}
	if compiledOf(t, b.Release()) != c || compiledOf(t, a.Release()) != c {
		t.Error("instances of v1 hold different compiled schemas after the rebuild")
	}
	compiledOf(t, v4) // v4 was built after v3, so v3 made room for v1
	if n := h.compiles.Load() - builds; n != 1 {
		t.Errorf("asking for compiled releases again built %d more schemas, want none", n-1)
	}
	if n := h.reg.CompiledCount(); n != 2 {
		t.Errorf("%d releases compiled after the rebuild, want 2", n)
	}
	h.reg.SetCompiledLimit(1)
	if n := h.reg.CompiledCount(); n != 1 {
		t.Errorf("%d releases compiled after lowering the bound to 1, want 1", n)
	}

	// Load keeps to the bound too, and every instance still answers.
	reg := h.newRegistry()
	reg.SetCompiledLimit(2)
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if n := reg.CompiledCount(); n != 2 {
		t.Errorf("after Load, %d releases compiled, want 2", n)
	}
	la, _ := reg.Lookup("a.test")
	lb, _ := reg.Lookup("b.test")
	if ca := compiledOf(t, la.Release()); ca != compiledOf(t, lb.Release()) || ca.Model() != la.Release().Model {
		t.Error("after Load, the instances of v1 do not share one schema of v1")
	}
}

// TestCompiledEvictsLeastRecentlyUsed: a release asked for since the last
// build outlives one that was not.
func TestCompiledEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.reg.SetCompiledLimit(3)
	rels := h.putReleases(3)
	compiledOf(t, rels[0]) // v1 is used after v2 was built; v2 is not
	v4 := h.putRelease("v4", bookstoreSDL)
	builds := h.compiles.Load()
	for _, rel := range []*tenant.Release{rels[0], rels[2], v4} {
		compiledOf(t, rel)
	}
	if n := h.compiles.Load() - builds; n != 0 {
		t.Errorf("v1, v3 and v4 built %d schemas, want none: v2 was the one to evict", n)
	}
	compiledOf(t, rels[1])
	if n := h.compiles.Load() - builds; n != 1 {
		t.Errorf("v2 built %d schemas, want 1", n)
	}
}

// TestCompiledRebuildOnce: 50 callers asking at the same moment for an
// evicted release build it once and share it (go test -race).
func TestCompiledRebuildOnce(t *testing.T) {
	t.Parallel()
	const callers = 50
	h := newHarness(t)
	h.reg.SetCompiledLimit(2)
	v1 := h.putReleases(4)[0]
	builds := h.compiles.Load()
	// Every build waits at the gate, so the callers pile up behind the
	// first; entered has room for a build each, so a bug cannot hang it.
	h.gate, h.entered = make(chan struct{}), make(chan struct{}, callers)

	got := make([]tenant.Compiled, callers)
	errs := make([]error, callers)
	start := make(chan struct{})
	var ready, wg sync.WaitGroup
	ready.Add(callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			ready.Done()
			got[i], errs[i] = v1.Compiled()
		})
	}
	close(start)
	<-h.entered  // one caller builds, held at the gate
	ready.Wait() // while every caller is asking
	close(h.gate)
	wg.Wait()

	if n := h.compiles.Load() - builds; n != 1 {
		t.Errorf("%d callers built %d schemas, want 1", callers, n)
	}
	for i := range callers {
		if errs[i] != nil || got[i] == nil || got[i] != got[0] {
			t.Fatalf("caller %d got %v, %v; want the one schema %v", i, got[i], errs[i], got[0])
		}
	}
	if got[0].Model() != v1.Model {
		t.Error("the schema is not v1's")
	}
}

// TestCompiledUnderChurn asks for more releases than the bound from many
// goroutines: every call answers its release's schema, and the bound
// holds (go test -race).
func TestCompiledUnderChurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.reg.SetCompiledLimit(2)
	rels := h.putReleases(4)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				rel := rels[(g+i)%len(rels)]
				c, err := rel.Compiled()
				if err != nil || c.Model() != rel.Model {
					t.Errorf("%s: got %v, %v; want its schema", rel.Name, c, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := h.reg.CompiledCount(); n > 2 {
		t.Errorf("%d releases compiled, want at most 2", n)
	}
}

// TestCompiledRebuildError: a rebuild that fails is an error naming the
// release, and the next call tries again.
func TestCompiledRebuildError(t *testing.T) {
	t.Parallel()
	st := newHarness(t).st
	fail := atomic.Bool{}
	reg := tenant.NewRegistry(st, func(m *schema.Model) (tenant.Compiled, error) {
		if fail.Load() {
			return nil, errors.New("out of memory")
		}
		return &compiled{m}, nil
	}, auth.NewToken)
	reg.SetCompiledLimit(1)
	ctx := context.Background()
	v1, _, err := reg.PutRelease(ctx, "bookstore", "v1", "", bookstoreSDL)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.PutRelease(ctx, "bookstore", "v2", "", bookstoreSDL); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if c, err := v1.Compiled(); err == nil || c != nil || !strings.Contains(err.Error(), "bookstore/v1") {
		t.Errorf("Compiled with a failing compiler: %v, %v; want an error naming bookstore/v1", c, err)
	}
	fail.Store(false)
	if c, err := v1.Compiled(); err != nil || c.Model() != v1.Model {
		t.Errorf("Compiled once the compiler works: %v, %v", c, err)
	}
}

// TestCompiledCountFollowsReleases: a replaced release, or one whose
// storing failed, no longer counts against the bound.
func TestCompiledCountFollowsReleases(t *testing.T) {
	h := newHarness(t) // not parallel: it fails the store's PutDoc
	h.putRelease("v1", bookstoreSDL)
	h.putRelease("v1", bookstoreV2SDL)
	if n := h.reg.CompiledCount(); n != 1 {
		t.Errorf("after replacing v1, %d releases compiled, want 1", n)
	}
	h.st.failPutDoc = "release"
	if _, _, err := h.reg.PutRelease(context.Background(), "bookstore", "v2", "", bookstoreSDL); err == nil {
		t.Fatal("PutRelease succeeded on a failing store")
	}
	if n := h.reg.CompiledCount(); n != 1 {
		t.Errorf("after a failed PutRelease, %d releases compiled, want 1", n)
	}
}

// TestNewRelease: a release made from a compiled schema serves it, and a
// release with none says so.
func TestNewRelease(t *testing.T) {
	t.Parallel()
	m, err := schema.Parse(bookstoreSDL, schema.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	c := &compiled{m}
	rel := tenant.NewRelease("bookstore", "v1", "main", bookstoreSDL, c)
	if got := compiledOf(t, rel); got != c || rel.Model != m {
		t.Errorf("NewRelease serves %v with model %p, want %v and %p", got, rel.Model, c, m)
	}
	if c, err := (&tenant.Release{App: "bookstore", Name: "v0"}).Compiled(); err == nil || c != nil {
		t.Errorf("a release without a schema: %v, %v; want an error", c, err)
	}
}

func TestReleaseCompiledAllocationFree(t *testing.T) {
	// Not parallel: AllocsPerRun refuses to run in a parallel test.
	h := newHarness(t)
	h.putRelease("v1", bookstoreSDL)
	inst, _ := h.create("a.test", "v1")
	if n := testing.AllocsPerRun(100, func() { _, _ = inst.Release().Compiled() }); n != 0 {
		t.Errorf("Compiled allocates %.0f times, want 0", n)
	}
}

// BenchmarkReleaseCompiled measures the hot path: a release whose schema
// is compiled, as a request asks for it.
func BenchmarkReleaseCompiled(b *testing.B) {
	h := newHarness(b)
	h.putRelease("v1", bookstoreSDL)
	inst, _ := h.create("a.test", "v1")
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := inst.Release().Compiled(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := inst.Release().Compiled(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func TestPutRelease(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	put := func(name, realm, sdl string) (tenant.PutResult, error) {
		_, res, err := h.reg.PutRelease(ctx, "bookstore", name, realm, sdl)
		return res, err
	}
	steps := []struct {
		name      string
		release   string
		realm     string
		sdl       string
		run       func() // before the step
		want      tenant.PutResult
		wantCode  errcode.Code
		wantError error
	}{
		{name: "create", release: "v1", sdl: bookstoreSDL, want: tenant.Created},
		{name: "same again", release: "v1", sdl: bookstoreSDL, want: tenant.Unchanged},
		{name: "replace while unused", release: "v1", sdl: bookstoreV2SDL, want: tenant.Replaced},
		{name: "invalid SDL", release: "v9", sdl: "type Book { title: Strin }", wantCode: errcode.BadRequest, wantError: tenant.ErrInvalid},
		{name: "bad release name", release: "v/1", sdl: bookstoreSDL, wantCode: errcode.BadRequest, wantError: tenant.ErrInvalid},
		{name: "same while in use", release: "v1", sdl: bookstoreV2SDL, want: tenant.Unchanged,
			run: func() { h.create("a.test", "v1") }},
		{name: "change while in use", release: "v1", sdl: bookstoreSDL, wantCode: errcode.Conflict, wantError: tenant.ErrReleaseInUse},
		{name: "realm change while in use", release: "v1", realm: "acme", sdl: bookstoreV2SDL, wantCode: errcode.Conflict},
		{name: "new release", release: "v2", sdl: bookstoreSDL, want: tenant.Created},
	}
	for _, s := range steps { // in order: each step builds on the last
		if s.run != nil {
			s.run()
		}
		res, err := put(s.release, s.realm, s.sdl)
		if code(err) != s.wantCode || (s.wantError != nil && !errors.Is(err, s.wantError)) {
			t.Fatalf("%s: err = %v (code %q), want code %q, %v", s.name, err, code(err), s.wantCode, s.wantError)
		}
		if err == nil && res != s.want {
			t.Errorf("%s: result %v, want %v", s.name, res, s.want)
		}
	}

	// The schema errors keep their positions.
	_, _, err := h.reg.PutRelease(ctx, "bookstore", "bad", "", "type Book {\n  title: Strin\n}")
	var errs schema.Errors
	if !errors.As(err, &errs) || len(errs) == 0 || errs[0].Line != 2 || errs[0].Column == 0 {
		t.Errorf("PutRelease of an unknown field type: %v, want schema.Errors at line 2", err)
	}
}

func TestCreateInstance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	rel := h.putRelease("v1", bookstoreSDL)
	inst, token := h.create("Shop.Example", "v1")

	if inst.Domain != "shop.example" {
		t.Errorf("domain %q, want it lower-cased", inst.Domain)
	}
	if got, ok := h.reg.Lookup("SHOP.example"); !ok || got != inst {
		t.Errorf("Lookup is not case-insensitive")
	}
	if len(token) < 22 || !auth.TokenMatches(token, inst.TokenHash) {
		t.Errorf("token %q (%d chars) does not match the stored hash", token, len(token))
	}
	if inst.ID == "" || inst.AdminAccountID == "" || inst.ID == inst.AdminAccountID {
		t.Errorf("ids: instance %q, admin account %q", inst.ID, inst.AdminAccountID)
	}
	acc, err := h.st.Get(ctx, inst.ID, "Account", inst.AdminAccountID)
	if err != nil {
		t.Fatalf("admin account: %v", err)
	}
	if acc.CreatedBy != inst.AdminAccountID || acc.Fields["enabled"] != true || acc.Fields["verified"] != true {
		t.Errorf("admin account = %+v, want enabled, verified, created by itself", acc)
	}
	if diff := cmp.Diff(tenant.Specs(rel.Model), h.st.lastDeclared(inst.ID)); diff != "" {
		t.Errorf("declared types (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		spec tenant.InstanceSpec
		code errcode.Code
		err  error
	}{
		{"taken domain", tenant.InstanceSpec{Domain: "shop.example", App: "bookstore", Release: "v1"}, errcode.Conflict, tenant.ErrExists},
		{"taken domain, other case", tenant.InstanceSpec{Domain: "SHOP.EXAMPLE", App: "bookstore", Release: "v1"}, errcode.Conflict, tenant.ErrExists},
		{"unknown app", tenant.InstanceSpec{Domain: "x.test", App: "nope", Release: "v1"}, errcode.NotFound, tenant.ErrNotFound},
		{"unknown release", tenant.InstanceSpec{Domain: "x.test", App: "bookstore", Release: "v9"}, errcode.NotFound, tenant.ErrNotFound},
		{"bad domain", tenant.InstanceSpec{Domain: "a b", App: "bookstore", Release: "v1"}, errcode.BadRequest, tenant.ErrInvalid},
		{"empty domain", tenant.InstanceSpec{App: "bookstore", Release: "v1"}, errcode.BadRequest, tenant.ErrInvalid},
		{"bad env name", tenant.InstanceSpec{Domain: "x.test", App: "bookstore", Release: "v1",
			Settings: tenant.Settings{Env: map[string]string{"1X": "y"}}}, errcode.BadRequest, tenant.ErrInvalid},
	} {
		_, _, err := h.reg.CreateInstance(ctx, tc.spec)
		if code(err) != tc.code || !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want code %s (%v)", tc.name, err, tc.code, tc.err)
		}
	}
}

func TestCreateInstanceLeavesNothingOnFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	h.putRelease("v1", bookstoreSDL)
	h.st.failPutDoc = "instance"
	if _, _, err := h.reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "a.test", App: "bookstore", Release: "v1"}); err == nil {
		t.Fatal("CreateInstance succeeded with a failing store")
	}
	if _, ok := h.reg.Lookup("a.test"); ok {
		t.Error("a failed instance is served")
	}
	h.st.mu.Lock()
	ids := make([]string, 0, len(h.st.declared))
	for id := range h.st.declared {
		ids = append(ids, id)
	}
	h.st.mu.Unlock()
	if len(ids) != 1 {
		t.Fatalf("declared %d instances, want the one attempt", len(ids))
	}
	recs, err := h.st.Find(ctx, ids[0], &store.Query{Type: "Account", IncludeTrashed: true})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if len(recs) != 0 {
		t.Errorf("the failed instance left %d Account records", len(recs))
	}
}

func TestUpdateInstance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	v1 := h.putRelease("v1", bookstoreSDL)
	v2 := h.putRelease("v2", bookstoreV2SDL)
	inst, _ := h.create("a.test", "v1")

	// A request in flight holds the release it loaded.
	inFlight := inst.Release()
	got, err := h.reg.UpdateInstance(ctx, "a.test", tenant.Change{Release: ptr("v2")})
	if err != nil {
		t.Fatal(err)
	}
	if got != inst {
		t.Errorf("a release swap published a new Instance; want the live one swapped")
	}
	if inst.Release() != v2 || inFlight != v1 {
		t.Errorf("after the swap: instance serves %s, in-flight request holds %s; want v2 and v1", inst.Release().Name, inFlight.Name)
	}
	if diff := cmp.Diff(tenant.Specs(v2.Model), h.st.lastDeclared(inst.ID)); diff != "" {
		t.Errorf("declared after the swap (-want +got):\n%s", diff)
	}
	// v1 is free again, so it may be replaced; v2 may not.
	if _, _, err := h.reg.PutRelease(ctx, "bookstore", "v2", "", bookstoreSDL); code(err) != errcode.Conflict {
		t.Errorf("replacing the release in use: %v, want CONFLICT", err)
	}
	if _, _, err := h.reg.PutRelease(ctx, "bookstore", "v1", "", bookstoreV2SDL+"\n# changed"); err != nil {
		t.Errorf("replacing the release no longer in use: %v", err)
	}

	// Settings changes publish a new value and keep the release.
	got, err = h.reg.UpdateInstance(ctx, "a.test", tenant.Change{
		Settings: []byte(`{"anonymousRequests": true, "env": {"STRIPE_SECRET": "whsec"}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := tenant.Settings{AnonymousRequests: true, Env: map[string]string{"STRIPE_SECRET": "whsec"}}
	if diff := cmp.Diff(want, got.Settings); diff != "" || got.Release() != v2 {
		t.Errorf("settings (-want +got):\n%s\nrelease %s", diff, got.Release().Name)
	}
	if l, _ := h.reg.Lookup("a.test"); l != got {
		t.Error("Lookup does not return the updated instance")
	}
	if inst.Settings.AnonymousRequests {
		t.Error("the old Instance value was changed in place")
	}

	// An empty env clears it; absent fields keep their values.
	got, err = h.reg.UpdateInstance(ctx, "a.test", tenant.Change{Settings: []byte(`{"env": {}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tenant.Settings{AnonymousRequests: true}, got.Settings); diff != "" {
		t.Errorf("after clearing env (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name   string
		domain string
		ch     tenant.Change
		code   errcode.Code
	}{
		{"unknown domain", "nope.test", tenant.Change{Settings: []byte(`{"anonymousRequests": true}`)}, errcode.NotFound},
		{"unknown setting", "a.test", tenant.Change{Settings: []byte(`{"anonymousRequest": true}`)}, errcode.BadRequest},
		{"bad setting value", "a.test", tenant.Change{Settings: []byte(`{"sessionLifetime": "long"}`)}, errcode.BadRequest},
		{"unknown release", "a.test", tenant.Change{Release: ptr("v9")}, errcode.NotFound},
		{"empty release", "a.test", tenant.Change{Release: ptr("")}, errcode.BadRequest},
	} {
		if _, err := h.reg.UpdateInstance(ctx, tc.domain, tc.ch); code(err) != tc.code {
			t.Errorf("%s: err = %v, want code %s", tc.name, err, tc.code)
		}
	}

	// Everything survives a restart.
	reg := h.newRegistry()
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	l, ok := reg.Lookup("a.test")
	if !ok || l.Release().Name != "v2" || !l.Settings.AnonymousRequests || l.ID != inst.ID ||
		l.AdminAccountID != inst.AdminAccountID || l.TokenHash != inst.TokenHash || !l.Created.Equal(inst.Created) {
		t.Errorf("after Load: %+v (release %s), want %+v", l, l.Release().Name, got)
	}
	if diff := cmp.Diff(tenant.Specs(v2.Model), h.st.lastDeclared(inst.ID)); diff != "" {
		t.Errorf("declared at Load (-want +got):\n%s", diff)
	}
}

func TestRotateToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	h.putRelease("v1", bookstoreSDL)
	_, old := h.create("a.test", "v1")
	inst, token, err := h.reg.RotateToken(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	if token == old || !auth.TokenMatches(token, inst.TokenHash) || auth.TokenMatches(old, inst.TokenHash) {
		t.Error("after rotation the new token must match and the old one must not")
	}
	if l, _ := h.reg.Lookup("a.test"); l != inst {
		t.Error("Lookup does not serve the rotated instance")
	}
	reg := h.newRegistry()
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if l, _ := reg.Lookup("a.test"); !auth.TokenMatches(token, l.TokenHash) {
		t.Error("the rotated token does not survive a restart")
	}
	if _, _, err := h.reg.RotateToken(ctx, "nope.test"); code(err) != errcode.NotFound {
		t.Errorf("rotating an unknown domain: %v, want NOT_FOUND", err)
	}
}

func TestDeleteInstance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	h.putRelease("v1", bookstoreSDL)
	inst, _ := h.create("a.test", "v1")
	keep, _ := h.create("b.test", "v1")
	if _, err := h.reg.DeleteInstance(ctx, "a.test"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.reg.Lookup("a.test"); ok {
		t.Error("a deleted instance is served")
	}
	if _, err := h.st.Get(ctx, inst.ID, "Account", inst.AdminAccountID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the deleted instance's admin account: %v, want ErrNotFound", err)
	}
	if _, err := h.st.Get(ctx, keep.ID, "Account", keep.AdminAccountID); err != nil {
		t.Errorf("the other instance lost its account: %v", err)
	}
	if _, err := h.reg.DeleteInstance(ctx, "a.test"); code(err) != errcode.NotFound {
		t.Errorf("deleting twice: %v, want NOT_FOUND", err)
	}
	reg := h.newRegistry()
	if err := reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Lookup("a.test"); ok {
		t.Error("a deleted instance comes back after a restart")
	}
	// The release is free again.
	if _, err := h.reg.DeleteInstance(ctx, "b.test"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.reg.PutRelease(ctx, "bookstore", "v1", "", bookstoreV2SDL); err != nil {
		t.Errorf("replacing a release no instance runs: %v", err)
	}
}

// TestOnDelete checks that the OnDelete functions run once per deleted
// instance, after its records are gone, and that a failure is reported
// while the instance stays deleted.
func TestOnDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	h.putRelease("v1", bookstoreSDL)
	a, _ := h.create("a.test", "v1")
	b, _ := h.create("b.test", "v1")
	var cleaned []string
	h.reg.OnDelete(func(ctx context.Context, id string) error {
		if _, err := h.st.Get(ctx, id, "Account", a.AdminAccountID); id == a.ID && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("OnDelete ran before the records were dropped: %v", err)
		}
		cleaned = append(cleaned, id)
		if id == b.ID {
			return errors.New("the log is gone already")
		}
		return nil
	})
	if _, err := h.reg.DeleteInstance(ctx, "a.test"); err != nil {
		t.Fatal(err)
	}
	_, err := h.reg.DeleteInstance(ctx, "b.test")
	if err == nil || !strings.Contains(err.Error(), "the log is gone already") {
		t.Errorf("a failing OnDelete: %v, want its error", err)
	}
	if _, ok := h.reg.Lookup("b.test"); ok {
		t.Error("b.test is served after its deletion failed to clean up")
	}
	if diff := cmp.Diff([]string{a.ID, b.ID}, cleaned); diff != "" {
		t.Errorf("cleaned (-want +got):\n%s", diff)
	}
}

func TestLookupIsLockFreeAndAllocationFree(t *testing.T) {
	// Not parallel: AllocsPerRun refuses to run in a parallel test.
	h := newHarness(t)
	h.putRelease("v1", bookstoreSDL)
	h.create("a.test", "v1")
	if n := testing.AllocsPerRun(100, func() { h.reg.Lookup("a.test") }); n != 0 {
		t.Errorf("Lookup allocates %.0f times, want 0", n)
	}

	// Readers run while writers change the registry (go test -race).
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if inst, ok := h.reg.Lookup("a.test"); !ok || inst.Release() == nil {
					t.Error("a.test vanished during unrelated changes")
					return
				}
			}
		})
	}
	for i := range 20 {
		d := fmt.Sprintf("n%d.test", i)
		h.create(d, "v1")
		if _, _, err := h.reg.RotateToken(ctx, "a.test"); err != nil {
			t.Error(err)
		}
		if _, err := h.reg.DeleteInstance(ctx, d); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
}

func ptr[T any](v T) *T { return &v }
