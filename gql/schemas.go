package gql

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/corehq/core/schema"
	"github.com/corehq/core/tenant"
)

// DefaultSchemaLimit is how many releases the engine keeps compiled at
// once unless SetSchemaLimit says otherwise. A compiled schema takes
// about 211 KiB, so 256 of them take about 54 MiB at worst, however many
// releases are stored; a release beyond the bound is compiled again from
// its model when next asked for.
const DefaultSchemaLimit = 256

// errUnfinished is what callers waiting for a build get when the build
// panicked instead of returning.
var errUnfinished = errors.New("gql: compiling the release did not finish")

// schemas keeps the compiled schemas of the releases asked for most
// recently, shared by every instance running each. It is an approximate
// LRU that costs the hot path no lock and no write once warm: the
// compiled releases are an immutable map behind an atomic pointer (a
// lookup by pointer), tick counts builds, a release asked for records the
// current tick only when its own differs, and a build that takes the
// count past the limit drops the schemas of the releases with the oldest
// ticks, and of releases the directory no longer holds. Builds are rare,
// so a copy of the map per build and a scan to evict are cheap. Dropping
// is only forgetting the pointer: a request holding the schema keeps it,
// and the garbage collector frees it after. Safe for concurrent use.
type schemas struct {
	build func(*schema.Model) (*Schema, error)
	// holds reports whether the directory still serves a release; the
	// compiled schema of one it does not is dropped at the next build.
	holds func(*tenant.Release) bool
	tick  atomic.Uint64
	live  atomic.Pointer[map[*tenant.Release]*compiled]

	mu      sync.Mutex // guards changes of live, limit and flights
	limit   int
	flights map[*tenant.Release]*flight
}

// compiled is the schema of one release and when it was last asked for.
type compiled struct {
	s    *Schema
	used atomic.Uint64 // schemas.tick when last asked for
}

// flight is one build of a release's schema, which callers asking
// meanwhile wait for and share.
type flight struct {
	done chan struct{} // closed when s and err are set
	s    *Schema
	err  error
}

func newSchemas(build func(*schema.Model) (*Schema, error), holds func(*tenant.Release) bool) *schemas {
	c := &schemas{build: build, holds: holds, limit: DefaultSchemaLimit, flights: map[*tenant.Release]*flight{}}
	c.live.Store(&map[*tenant.Release]*compiled{})
	return c
}

// get returns the compiled schema of rel, building it when it is not
// compiled (first use, or evicted), once however many callers ask at the
// same moment. When it is compiled, get takes no lock and does not
// allocate.
func (c *schemas) get(rel *tenant.Release) (*Schema, error) {
	if e := (*c.live.Load())[rel]; e != nil {
		if t := c.tick.Load(); e.used.Load() != t {
			e.used.Store(t)
		}
		return e.s, nil
	}
	return c.compile(rel)
}

// compile builds rel's schema, or waits for the build another caller
// started and shares its outcome.
func (c *schemas) compile(rel *tenant.Release) (*Schema, error) {
	c.mu.Lock()
	if e := (*c.live.Load())[rel]; e != nil {
		c.mu.Unlock()
		return e.s, nil
	}
	if f := c.flights[rel]; f != nil {
		c.mu.Unlock()
		<-f.done
		return f.s, f.err
	}
	f := &flight{done: make(chan struct{}), err: errUnfinished}
	c.flights[rel] = f
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.flights, rel)
		c.mu.Unlock()
		close(f.done)
	}()
	s, err := c.safeBuild(rel.Model)
	if err != nil {
		f.err = fmt.Errorf("gql: compiling release %s/%s: %w", rel.App, rel.Name, err)
		return nil, f.err
	}
	c.add(rel, s)
	f.s, f.err = s, nil
	return s, nil
}

// safeBuild is build with a panic turned into an error: the request that
// asked for the schema answers 500 INTERNAL (its log line names the
// panic), the callers waiting for the same build get the error too, and
// the next request builds again.
func (c *schemas) safeBuild(m *schema.Model) (s *Schema, err error) {
	defer func() {
		if x := recover(); x != nil {
			s, err = nil, fmt.Errorf("panic while building the schema: %v", x)
		}
	}()
	return c.build(m)
}

// add makes s the compiled schema of rel, then evicts beyond the limit,
// never rel itself: its callers are about to use it.
func (c *schemas) add(rel *tenant.Release, s *Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.live.Load()
	live := make(map[*tenant.Release]*compiled, len(old)+1)
	for r, e := range old {
		if c.holds == nil || c.holds(r) {
			live[r] = e
		}
	}
	e := &compiled{s: s}
	e.used.Store(c.tick.Add(1))
	live[rel] = e
	c.trim(live, rel)
	c.live.Store(&live)
}

// trim evicts from live the least recently used releases but keep until
// at most limit are compiled; c.mu is held.
func (c *schemas) trim(live map[*tenant.Release]*compiled, keep *tenant.Release) {
	for len(live) > c.limit {
		var oldest *tenant.Release
		for rel, e := range live {
			if rel != keep && (oldest == nil || e.used.Load() < live[oldest].used.Load()) {
				oldest = rel
			}
		}
		if oldest == nil {
			return
		}
		delete(live, oldest)
	}
}

// setLimit changes the bound, evicting at once beyond it.
func (c *schemas) setLimit(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limit = max(n, 1)
	live := *c.live.Load()
	if len(live) <= c.limit {
		return
	}
	trimmed := make(map[*tenant.Release]*compiled, len(live))
	for r, e := range live {
		trimmed[r] = e
	}
	c.trim(trimmed, nil)
	c.live.Store(&trimmed)
}

// count returns how many releases hold a compiled schema.
func (c *schemas) count() int { return len(*c.live.Load()) }
