package tenant

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// DefaultCompiledLimit is how many releases a registry keeps compiled at
// once unless SetCompiledLimit says otherwise. A compiled schema takes
// about 211 KiB, so 256 of them take about 54 MiB at worst, however many
// releases are stored; a release beyond the bound is compiled again from
// its model when next asked for.
const DefaultCompiledLimit = 256

// errUnfinished is what callers waiting for a rebuild get when the build
// panicked instead of returning.
var errUnfinished = errors.New("tenant: compiling the release did not finish")

// compiledRef boxes a Compiled for an atomic pointer.
type compiledRef struct{ c Compiled }

// flight is one rebuild of a release, which callers asking meanwhile wait
// for and share.
type flight struct {
	done chan struct{} // closed when c and err are set
	c    Compiled
	err  error
}

// compiledCache bounds how many of a registry's releases hold their
// compiled schema. It is an approximate LRU that costs the hot path no
// lock and no write once warm: tick counts builds, a release asked for
// records the current tick only when its own differs, and a build that
// takes the count past the limit drops the schemas of the releases with
// the oldest ticks. Builds are rare, so finding those by a scan is cheap.
// Dropping is only forgetting the pointer: a request holding the schema
// keeps it, and the garbage collector frees it after.
type compiledCache struct {
	compile Compiler
	tick    atomic.Uint64

	mu    sync.Mutex
	limit int
	live  map[*Release]struct{} // the releases holding a compiled schema
}

func newCompiledCache(compile Compiler) *compiledCache {
	return &compiledCache{compile: compile, limit: DefaultCompiledLimit, live: map[*Release]struct{}{}}
}

// touch records that rel was asked for (a nil cache is a pinned release).
func (c *compiledCache) touch(rel *Release) {
	if c == nil {
		return
	}
	if t := c.tick.Load(); rel.used.Load() != t {
		rel.used.Store(t)
	}
}

// add makes v the compiled schema of rel, then evicts beyond the limit,
// never rel itself: its callers are about to use it.
func (c *compiledCache) add(rel *Release, v Compiled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rel.used.Store(c.tick.Add(1))
	rel.compiled.Store(&compiledRef{v})
	c.live[rel] = struct{}{}
	c.trim(rel)
}

// trim evicts the least recently used releases but keep until at most
// limit are compiled; c.mu is held.
func (c *compiledCache) trim(keep *Release) {
	for len(c.live) > c.limit {
		var oldest *Release
		for rel := range c.live {
			if rel != keep && (oldest == nil || rel.used.Load() < oldest.used.Load()) {
				oldest = rel
			}
		}
		if oldest == nil {
			return
		}
		oldest.compiled.Store(nil)
		delete(c.live, oldest)
	}
}

// setLimit changes the bound, evicting at once beyond it.
func (c *compiledCache) setLimit(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limit = max(n, 1)
	c.trim(nil)
}

// count returns how many releases hold a compiled schema.
func (c *compiledCache) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.live)
}

// retire stops counting the releases of from that to does not hold under
// the same key: they left the registry (or never joined it), and their
// compiled schemas go with the last request holding them.
func (c *compiledCache) retire(from, to map[string]*Release) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, rel := range from {
		if to[key] != rel {
			delete(c.live, rel)
		}
	}
}

// Compiled returns the release's compiled schema, shared by every
// instance running it. When the registry evicted it to stay within its
// bound (SetCompiledLimit), it is built again from Model, once however
// many callers ask at the same moment. A request keeps what it got until
// it ends: eviction only drops the release's reference. When the schema
// is compiled, Compiled takes no lock and does not allocate.
func (r *Release) Compiled() (Compiled, error) {
	if p := r.compiled.Load(); p != nil {
		r.cache.touch(r)
		return p.c, nil
	}
	return r.rebuild()
}

// rebuild compiles an evicted release again, or waits for the rebuild
// another caller started and shares its outcome.
func (r *Release) rebuild() (Compiled, error) {
	if r.cache == nil {
		return nil, fmt.Errorf("tenant: release %s/%s has no compiled schema", r.App, r.Name)
	}
	r.mu.Lock()
	if p := r.compiled.Load(); p != nil {
		r.mu.Unlock()
		r.cache.touch(r)
		return p.c, nil
	}
	if f := r.flight; f != nil {
		r.mu.Unlock()
		<-f.done
		return f.c, f.err
	}
	f := &flight{done: make(chan struct{}), err: errUnfinished}
	r.flight = f
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.flight = nil
		r.mu.Unlock()
		close(f.done)
	}()
	c, err := r.cache.compile(r.Model)
	if err != nil {
		f.err = fmt.Errorf("tenant: compiling release %s/%s again: %w", r.App, r.Name, err)
		return nil, f.err
	}
	r.cache.add(r, c)
	f.c, f.err = c, nil
	return c, nil
}

// NewRelease returns a release serving c, with c.Model() as its Model.
// No registry owns it, so c stays compiled for as long as the release
// lives. It is for tests and tools that compile a schema themselves; the
// registry makes its own releases.
func NewRelease(app, name, realm, sdl string, c Compiled) *Release {
	r := &Release{App: app, Name: name, Realm: realm, SDL: sdl, Model: c.Model()}
	r.compiled.Store(&compiledRef{c})
	return r
}
