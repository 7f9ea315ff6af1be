package gql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/tenant"
)

const schemasSDL = `type Author { name: String age: Int bestbook: Book booklist: [Book!] }
type Book @indices(sets: [["price"]]) { title: String authorid: Int price: Float }`

// schemasHarness is a schema cache over a real directory whose builds are
// counted (and, with gate set, held until it is closed; each build first
// sends on entered). Builds make a Schema holding only the model: the
// cache never looks further.
type schemasHarness struct {
	t             testing.TB
	reg           *tenant.Directory
	c             *schemas
	builds        atomic.Int32
	fail          atomic.Bool
	gate, entered chan struct{}
}

func newSchemasHarness(t testing.TB, limit int) *schemasHarness {
	t.Helper()
	st := bolttest.Open(t)
	h := &schemasHarness{t: t, reg: tenant.NewDirectory(st)}
	h.c = newSchemas(func(m *schema.Model) (*Schema, error) {
		h.builds.Add(1)
		if h.gate != nil {
			h.entered <- struct{}{}
			<-h.gate
		}
		if h.fail.Load() {
			return nil, errors.New("out of memory")
		}
		return &Schema{model: m}, nil
	}, h.reg.Holds)
	h.c.setLimit(limit)
	return h
}

func (h *schemasHarness) put(name, sdl string) *tenant.Release {
	h.t.Helper()
	rel, _, err := h.reg.PutRelease(context.Background(), "bookstore", name, "", sdl)
	if err != nil {
		h.t.Fatalf("PutRelease %s: %v", name, err)
	}
	return rel
}

func (h *schemasHarness) puts(n int) []*tenant.Release {
	rels := make([]*tenant.Release, n)
	for i := range rels {
		rels[i] = h.put(fmt.Sprintf("v%d", i+1), schemasSDL)
	}
	return rels
}

func (h *schemasHarness) get(rel *tenant.Release) *Schema {
	h.t.Helper()
	s, err := h.c.get(rel)
	if err != nil {
		h.t.Fatalf("release %s: %v", rel.Name, err)
	}
	if s.Model() != rel.Model {
		h.t.Fatalf("release %s: the schema is not built from its model", rel.Name)
	}
	return s
}

// TestSchemaCompiledOnceAndShared: the instances of a release share one
// schema, built once when first asked for (not when published).
func TestSchemaCompiledOnceAndShared(t *testing.T) {
	t.Parallel()
	h := newSchemasHarness(t, DefaultSchemaLimit)
	h.put("v1", schemasSDL)
	ctx := context.Background()
	a, _, err := h.reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "a.test", App: "bookstore", Release: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := h.reg.CreateInstance(ctx, tenant.InstanceSpec{Domain: "b.test", App: "bookstore", Release: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.builds.Load(); n != 0 {
		t.Errorf("publishing and creating instances built %d schemas, want none", n)
	}
	if h.get(a.Release()) != h.get(b.Release()) {
		t.Error("instances of one release hold different schemas")
	}
	if n := h.builds.Load(); n != 1 {
		t.Errorf("built %d times, want once", n)
	}
}

// TestSchemaLimit bounds the compiled schemas to 2 of 4 releases: an
// evicted release is compiled again when asked for, once.
func TestSchemaLimit(t *testing.T) {
	t.Parallel()
	h := newSchemasHarness(t, 2)
	rels := h.puts(4)
	for i, rel := range rels {
		h.get(rel)
		if n := h.c.count(); n > 2 {
			t.Fatalf("after %d releases, %d are compiled; want at most 2", i+1, n)
		}
	}
	builds := h.builds.Load()
	s := h.get(rels[0]) // evicted: the oldest build
	if n := h.builds.Load() - builds; n != 1 {
		t.Errorf("asking for evicted v1 built %d schemas, want 1", n)
	}
	if h.get(rels[0]) != s {
		t.Error("v1 asked for again gives another schema")
	}
	h.get(rels[3]) // v4 was built after v3, so v3 made room for v1
	if n := h.builds.Load() - builds; n != 1 {
		t.Errorf("asking for compiled releases again built %d more schemas, want none", n-1)
	}
	if n := h.c.count(); n != 2 {
		t.Errorf("%d releases compiled after the rebuild, want 2", n)
	}
	h.c.setLimit(1)
	if n := h.c.count(); n != 1 {
		t.Errorf("%d releases compiled after lowering the bound to 1, want 1", n)
	}
}

// TestSchemasEvictLeastRecentlyUsed: a release asked for since the last
// build outlives one that was not.
func TestSchemasEvictLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	h := newSchemasHarness(t, 3)
	rels := h.puts(4)
	for _, rel := range rels[:3] {
		h.get(rel)
	}
	h.get(rels[0]) // v1 is used after v2 was built; v2 is not
	h.get(rels[3])
	builds := h.builds.Load()
	for _, rel := range []*tenant.Release{rels[0], rels[2], rels[3]} {
		h.get(rel)
	}
	if n := h.builds.Load() - builds; n != 0 {
		t.Errorf("v1, v3 and v4 built %d schemas, want none: v2 was the one to evict", n)
	}
	h.get(rels[1])
	if n := h.builds.Load() - builds; n != 1 {
		t.Errorf("v2 built %d schemas, want 1", n)
	}
}

// TestSchemaRebuildOnce: 50 callers asking at the same moment for a
// release build it once and share it (go test -race).
func TestSchemaRebuildOnce(t *testing.T) {
	t.Parallel()
	const callers = 50
	h := newSchemasHarness(t, 2)
	v1 := h.put("v1", schemasSDL)
	// Every build waits at the gate, so the callers pile up behind the
	// first; entered has room for a build each, so a bug cannot hang it.
	h.gate, h.entered = make(chan struct{}), make(chan struct{}, callers)

	got := make([]*Schema, callers)
	errs := make([]error, callers)
	start := make(chan struct{})
	var ready, wg sync.WaitGroup
	ready.Add(callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			ready.Done()
			got[i], errs[i] = h.c.get(v1)
		})
	}
	close(start)
	<-h.entered  // one caller builds, held at the gate
	ready.Wait() // while every caller is asking
	close(h.gate)
	wg.Wait()

	if n := h.builds.Load(); n != 1 {
		t.Errorf("%d callers built %d schemas, want 1", callers, n)
	}
	for i := range callers {
		if errs[i] != nil || got[i] == nil || got[i] != got[0] {
			t.Fatalf("caller %d got %v, %v; want the one schema %v", i, got[i], errs[i], got[0])
		}
	}
}

// TestSchemasUnderChurn asks for more releases than the bound from many
// goroutines: every call answers its release's schema, and the bound
// holds (go test -race).
func TestSchemasUnderChurn(t *testing.T) {
	t.Parallel()
	h := newSchemasHarness(t, 2)
	rels := h.puts(4)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				rel := rels[(g+i)%len(rels)]
				s, err := h.c.get(rel)
				if err != nil || s.Model() != rel.Model {
					t.Errorf("%s: got %v, %v; want its schema", rel.Name, s, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := h.c.count(); n > 2 {
		t.Errorf("%d releases compiled, want at most 2", n)
	}
}

// TestSchemaBuildError: a build that fails is an error naming the
// release, and the next call tries again.
func TestSchemaBuildError(t *testing.T) {
	t.Parallel()
	h := newSchemasHarness(t, 1)
	v1 := h.put("v1", schemasSDL)
	h.fail.Store(true)
	if s, err := h.c.get(v1); err == nil || s != nil || !strings.Contains(err.Error(), "bookstore/v1") {
		t.Errorf("a failing build: %v, %v; want an error naming bookstore/v1", s, err)
	}
	h.fail.Store(false)
	h.get(v1)
}

// TestSchemasFollowDirectory: a replaced release no longer counts against
// the bound once another is built.
func TestSchemasFollowDirectory(t *testing.T) {
	t.Parallel()
	h := newSchemasHarness(t, DefaultSchemaLimit)
	h.get(h.put("v1", schemasSDL))
	v1b := h.put("v1", schemasSDL+"\ntype Shelf { label: String @unique }")
	h.get(v1b)
	if n := h.c.count(); n != 1 {
		t.Errorf("after replacing v1, %d releases compiled, want 1", n)
	}
}

func TestSchemaLookupAllocationFree(t *testing.T) {
	// Not parallel: AllocsPerRun refuses to run in a parallel test.
	h := newSchemasHarness(t, DefaultSchemaLimit)
	v1 := h.put("v1", schemasSDL)
	h.get(v1)
	if n := testing.AllocsPerRun(100, func() { _, _ = h.c.get(v1) }); n != 0 {
		t.Errorf("a compiled schema's lookup allocates %.0f times, want 0", n)
	}
}

// BenchmarkSchemaLookup measures the hot path: a release whose schema is
// compiled, as a request asks for it.
func BenchmarkSchemaLookup(b *testing.B) {
	h := newSchemasHarness(b, DefaultSchemaLimit)
	v1 := h.put("v1", schemasSDL)
	h.get(v1)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.c.get(v1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := h.c.get(v1); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// TestSchemaBuildPanicIsRecovered: a panic while a release's schema is
// built becomes an error for the caller that built it and for every
// caller waiting on the same build (none hangs, none panics), nothing is
// cached, and the next request builds again.
//
// hostile checklist 45: a panic inside the schema compiler → recovered
// (500 for that request), the process keeps serving.
func TestSchemaBuildPanicIsRecovered(t *testing.T) {
	t.Parallel()
	reg := tenant.NewDirectory(bolttest.Open(t))
	rel, _, err := reg.PutRelease(context.Background(), "bookstore", "v1", "", schemasSDL)
	if err != nil {
		t.Fatal(err)
	}
	var panicking atomic.Bool
	panicking.Store(true)
	entered, gate := make(chan struct{}), make(chan struct{})
	var builds atomic.Int32
	c := newSchemas(func(m *schema.Model) (*Schema, error) {
		if builds.Add(1) == 1 {
			entered <- struct{}{}
			<-gate
		}
		if panicking.Load() {
			panic("kaboom in the compiler")
		}
		return &Schema{model: m}, nil
	}, reg.Holds)

	const callers = 8
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := c.get(rel)
		errs <- err
	}()
	<-entered // the first build runs; the others wait on it
	for range callers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.get(rel)
			errs <- err
		}()
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil {
			t.Error("a caller got a schema from a build that panicked")
		} else if !strings.Contains(err.Error(), "panic while building the schema: kaboom in the compiler") && err != errUnfinished {
			t.Errorf("a caller got %v", err)
		}
	}
	panicking.Store(false)
	s, err := c.get(rel)
	if err != nil || s == nil {
		t.Errorf("the next build: %v", err)
	}
}
