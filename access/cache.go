package access

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/store"
)

// MaxGrants bounds the grants of one instance that are read: more is an
// error rather than a read of unbounded size on every refresh.
const MaxGrants = 100_000

// maxSets bounds the Sets one snapshot keeps (one per caller, type and
// operation asked about); past it they are computed afresh.
const maxSets = 10_000

// When a snapshot is older than the ttl, the instance's change feed says
// whether any AccessRight changed since it was read: when none did, the
// grants serve on without a read of them all. The feed is read a page of
// changePage at a time, at most maxRecheck changes; an instance that
// changed more than that (or whose feed was trimmed past the snapshot)
// has its grants read again, and so does one whose grants were last read
// maxReuse ago: on MongoDB a process that dies between writing a record
// and appending its change leaves a change the feed never shows.
const (
	changePage = 256
	maxRecheck = 4 * changePage
	maxReuse   = time.Minute
)

// Cache holds each instance's grants in memory, and the Sets computed
// from them. Safe for concurrent use.
type Cache struct {
	st store.Store
	// ttl is how old a snapshot may be before it is read again: the
	// time another process's change takes to count here.
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]*snapshot
}

// snapshot is an instance's grants as read at one moment.
type snapshot struct {
	once   sync.Once
	read   time.Time // guarded by Cache.mu
	grants []Grant
	// seq is the instance's newest change when the grants were read (or
	// found unchanged); loaded is when they were read.
	seq    uint64
	loaded time.Time
	err    error
	failed atomic.Bool // err != nil, for readers that do not wait on once
	done   atomic.Bool // once has run: grants, seq and err are set
	// sets are the Rights computed from the grants but the sourced ones,
	// kept until boundary (the first start or end date after read: a Set
	// computed before it could be wrong after). The sourced grants read
	// their members from a record at each request: their Set is computed
	// then and joined to the kept one.
	plain, sourced []Grant
	boundary       time.Time
	mu             sync.Mutex
	sets           map[setKey]*Set
}

type setKey struct {
	kind           auth.Kind
	account        string
	typ, operation string
}

// NewCache returns a cache over st whose snapshots live for ttl.
func NewCache(st store.Store, ttl time.Duration) *Cache {
	return &Cache{st: st, ttl: ttl, m: map[string]*snapshot{}}
}

// Grants returns the grants of an instance (all of them, active or not),
// read again when the snapshot is older than the cache's ttl. Readers
// share one read.
func (c *Cache) Grants(ctx context.Context, inst string, now time.Time) ([]Grant, error) {
	s := c.snapshot(ctx, inst, now)
	return s.grants, s.err
}

// Rights is access.Rights over the instance's grants, kept for the
// snapshot's life where that gives the same answer.
func (c *Cache) Rights(ctx context.Context, inst string, p auth.Principal, typ, operation string, now time.Time, source Members) (*Set, error) {
	s := c.snapshot(ctx, inst, now)
	if s.err != nil {
		return nil, s.err
	}
	if !s.boundary.IsZero() && !now.Before(s.boundary) {
		return Rights(s.grants, p, typ, operation, now, source), nil
	}
	set := s.plainRights(p, typ, operation, now)
	if len(s.sourced) > 0 {
		set = set.union(Rights(s.sourced, p, typ, operation, now, source))
	}
	return set, nil
}

// plainRights is Rights over the grants that name their members, kept.
func (s *snapshot) plainRights(p auth.Principal, typ, operation string, now time.Time) *Set {
	key := setKey{p.Kind, p.AccountID, typ, operation}
	s.mu.Lock()
	defer s.mu.Unlock()
	if set, ok := s.sets[key]; ok {
		return set
	}
	set := Rights(s.plain, p, typ, operation, now, nil)
	if s.sets == nil || len(s.sets) >= maxSets {
		s.sets = map[setKey]*Set{}
	}
	s.sets[key] = set
	return set
}

func (c *Cache) snapshot(ctx context.Context, inst string, now time.Time) *snapshot {
	c.mu.Lock()
	s := c.m[inst]
	var prev *snapshot // an expired snapshot that may still hold
	if s == nil || now.Sub(s.read) >= c.ttl || s.failed.Load() {
		if s != nil && s.done.Load() && !s.failed.Load() {
			prev = s
		}
		// read is set here, under mu, where it is also read: the
		// snapshot's age counts from when it was asked for.
		s = &snapshot{read: now}
		c.m[inst] = s
	}
	c.mu.Unlock()
	s.once.Do(func() {
		defer s.done.Store(true)
		if seq, ok := c.unchanged(ctx, inst, prev, now); ok {
			s.grants, s.plain, s.sourced, s.seq, s.loaded = prev.grants, prev.plain, prev.sourced, seq, prev.loaded
		} else {
			s.seq, s.grants, s.err = c.load(ctx, inst)
			s.plain, s.sourced = partition(s.grants)
			s.loaded = now
		}
		s.failed.Store(s.err != nil)
		for i := range s.grants {
			g := &s.grants[i]
			for _, t := range [...]time.Time{g.Start, g.End} {
				if t.After(now) && (s.boundary.IsZero() || t.Before(s.boundary)) {
					s.boundary = t
				}
			}
		}
	})
	return s
}

// partition splits grants into those that name their members and those
// that read them from a record; grants itself when none reads them.
func partition(grants []Grant) (plain, sourced []Grant) {
	n := 0
	for i := range grants {
		if grants[i].Source.ID != "" {
			n++
		}
	}
	if n == 0 {
		return grants, nil
	}
	plain, sourced = make([]Grant, 0, len(grants)-n), make([]Grant, 0, n)
	for _, g := range grants {
		if g.Source.ID != "" {
			sourced = append(sourced, g)
		} else {
			plain = append(plain, g)
		}
	}
	return plain, sourced
}

// Forget drops an instance's snapshot: the next request reads its grants
// again (after this process wrote an AccessRight, or deleted the
// instance).
func (c *Cache) Forget(inst string) {
	c.mu.Lock()
	delete(c.m, inst)
	c.mu.Unlock()
}

// unchanged reports whether no AccessRight of the instance changed since
// prev was read, and the newest change it looked at. Any doubt (no prev,
// an error, a trimmed or restarted feed, too many changes to look
// through, grants read maxReuse ago) is a change.
func (c *Cache) unchanged(ctx context.Context, inst string, prev *snapshot, now time.Time) (uint64, bool) {
	if prev == nil || now.Sub(prev.loaded) >= maxReuse {
		return 0, false
	}
	last, err := c.st.LastChange(ctx, inst)
	if err != nil || last < prev.seq || last-prev.seq > maxRecheck {
		return 0, false
	}
	for after := prev.seq; after < last; {
		page, err := c.st.Changes(ctx, inst, after, changePage)
		if err != nil || len(page) == 0 {
			return 0, false
		}
		for _, ch := range page {
			if ch.Type == Type {
				return 0, false
			}
		}
		after = page[len(page)-1].Seq
	}
	return last, true
}

// load reads the instance's grants, and the newest change before them:
// a change after it may or may not be in the grants read, so the next
// check looks at it.
func (c *Cache) load(ctx context.Context, inst string) (uint64, []Grant, error) {
	seq, err := c.st.LastChange(ctx, inst)
	if err != nil {
		return 0, nil, fmt.Errorf("access: reading the change feed: %w", err)
	}
	recs, err := c.st.Find(ctx, inst, &store.Query{Type: Type, Limit: MaxGrants + 1})
	if err != nil {
		return 0, nil, fmt.Errorf("access: reading the grants: %w", err)
	}
	if len(recs) > MaxGrants {
		return 0, nil, fmt.Errorf("access: the instance has more than %d AccessRight records", MaxGrants)
	}
	out := make([]Grant, len(recs))
	for i, r := range recs {
		out[i] = FromRecord(r)
	}
	return seq, out, nil
}
