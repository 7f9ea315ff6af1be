package tenant_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/errcode"
	"github.com/corehq/core/schema"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/tenant"
)

const (
	bookstoreSDL = `type Author { name: String age: Int bestbook: Book booklist: [Book!] }
type Book @indices(sets: [["price"]]) { title: String authorid: Int price: Float }`
	bookstoreV2SDL = bookstoreSDL + "\ntype Shelf { label: String @unique }"
)

// harness is a directory over a real bolt store that records what the
// directory asks of it.
type harness struct {
	t   testing.TB
	st  *spyStore
	reg *tenant.Directory
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
	st := bolttest.Open(t)
	h := &harness{t: t, st: &spyStore{Store: st, declared: map[string][]store.TypeSpec{}}}
	h.reg = h.newDirectory()
	return h
}

// newDirectory returns a fresh directory over the harness's store.
func (h *harness) newDirectory() *tenant.Directory {
	return tenant.NewDirectory(h.st)
}

// loaded returns a fresh directory loaded from the harness's store, as
// after a restart.
func (h *harness) loaded() *tenant.Directory {
	h.t.Helper()
	reg := h.newDirectory()
	if err := reg.Load(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	return reg
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

// code returns the errcode of err ("" for nil).
func code(err error) errcode.Code {
	if err == nil {
		return ""
	}
	return errcode.As(err).Code
}

func TestReleaseSharedByInstances(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.putRelease("v1", bookstoreSDL)
	a, _ := h.create("a.test", "v1")
	b, _ := h.create("b.test", "v1")
	if a.Release() != b.Release() || !h.reg.Holds(a.Release()) {
		t.Errorf("instances of one release hold different releases, or one the directory does not hold")
	}
	// Loading from the store shares each release the same way.
	reg := h.loaded()
	la, _ := reg.Lookup("a.test")
	lb, _ := reg.Lookup("b.test")
	if la == nil || lb == nil || la.Release() != lb.Release() || la.Release().Model == nil {
		t.Fatalf("after Load: a=%v b=%v, want both on one parsed release", la, lb)
	}
	if reg.Holds(a.Release()) || !reg.Holds(la.Release()) {
		t.Error("Holds answers for another directory's release, or not for its own")
	}
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
	reg := h.loaded()
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
	if l, _ := h.reg.LookupID(inst.ID); l != inst {
		t.Error("LookupID does not find the rotated instance")
	}
	reg := h.loaded()
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
	if _, ok := h.reg.LookupID(inst.ID); ok {
		t.Error("LookupID finds a deleted instance")
	}
	if l, ok := h.reg.LookupID(keep.ID); !ok || l.Domain != "b.test" {
		t.Errorf("LookupID of the instance kept: %v %v", l, ok)
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
	reg := h.loaded()
	if _, ok := reg.Lookup("a.test"); ok {
		t.Error("a deleted instance comes back after a restart")
	}
	if l, ok := reg.LookupID(keep.ID); !ok || l.Domain != "b.test" {
		t.Errorf("LookupID after a restart: %v %v", l, ok)
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

	// Readers run while writers change the directory (go test -race).
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
