package access

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/corehq/core/store"
)

// MaxGrants bounds the grants of one instance that are read: more is
// refused (ErrTooMany) rather than read on every refresh.
const MaxGrants = 100_000

// Cache holds each instance's grants in memory. Safe for concurrent use.
type Cache struct {
	st store.Store
	// ttl is how old a snapshot may be before it is read again: the
	// time another process's change takes to count here.
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]*snapshot
}

type snapshot struct {
	once   sync.Once
	read   time.Time
	grants []Grant
	err    error
}

// NewCache returns a cache over st whose snapshots live for ttl.
func NewCache(st store.Store, ttl time.Duration) *Cache {
	return &Cache{st: st, ttl: ttl, m: map[string]*snapshot{}}
}

// Grants returns the grants of an instance (all of them, active or not),
// read again when the snapshot is older than the cache's ttl. Readers
// share one read.
func (c *Cache) Grants(ctx context.Context, inst string, now time.Time) ([]Grant, error) {
	c.mu.Lock()
	s := c.m[inst]
	if s == nil || (!s.read.IsZero() && now.Sub(s.read) >= c.ttl) || s.err != nil {
		s = &snapshot{}
		c.m[inst] = s
	}
	c.mu.Unlock()
	s.once.Do(func() {
		s.grants, s.err = c.load(ctx, inst)
		s.read = now
	})
	return s.grants, s.err
}

// Forget drops an instance's snapshot: the next request reads its grants
// again (after this process wrote an AccessRight, or deleted the
// instance).
func (c *Cache) Forget(inst string) {
	c.mu.Lock()
	delete(c.m, inst)
	c.mu.Unlock()
}

func (c *Cache) load(ctx context.Context, inst string) ([]Grant, error) {
	recs, err := c.st.Find(ctx, inst, &store.Query{Type: Type, Limit: MaxGrants + 1})
	if err != nil {
		return nil, fmt.Errorf("access: reading the grants: %w", err)
	}
	if len(recs) > MaxGrants {
		return nil, fmt.Errorf("access: the instance has more than %d AccessRight records", MaxGrants)
	}
	out := make([]Grant, len(recs))
	for i, r := range recs {
		out[i] = FromRecord(r)
	}
	return out, nil
}
