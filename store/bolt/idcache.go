package bolt

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
)

// The id cache. A page of a find asks the store for the ids beyond it
// (hasNextPage, the cursors of the next and previous pages: gql's paging)
// with IDsOnly queries, which scan up to five pages of records on every
// request for ids alone. Their answers are kept, keyed by the query, until
// the next write: a generation counter that every write transaction
// increases before and after it commits (so that no answer computed
// during a commit outlives it) labels each answer, and an answer is
// served only under the generation it was computed in. Any write clears
// the whole cache in effect: simple and always correct, and the pages of
// a read-mostly instance are served from memory. The cache holds at most
// maxIDQueries answers of at most maxIDResults ids each.
const (
	maxIDQueries = 1024
	maxIDResults = 1000
)

type idCache struct {
	gen atomic.Uint64 // see above

	mu sync.Mutex
	m  map[string]idAnswer
}

type idAnswer struct {
	gen uint64
	ids []string
}

// written marks a write transaction: call it before and after committing.
func (c *idCache) written() { c.gen.Add(1) }

// key names an IDsOnly query with its filter already bound and its hops
// resolved; ok is false for a query the cache does not take.
func (c *idCache) key(inst string, q *store.Query, filter arcql.Expr) (string, bool) {
	if !q.IDsOnly || q.Limit <= 0 || q.Limit > maxIDResults || manyIDs(filter, maxKeyIDs) {
		return "", false
	}
	var b strings.Builder
	for _, s := range []string{inst, q.Type, arcql.Format(filter), q.After, q.Before} {
		b.WriteString(strconv.Quote(s))
	}
	for _, k := range q.Sort {
		b.WriteString(strconv.Quote(k.Path.String()))
		b.WriteString(strconv.FormatBool(k.Desc))
	}
	b.WriteByte('|')
	b.WriteString(strconv.FormatBool(q.Backward))
	b.WriteString(strconv.FormatBool(q.IncludeTrashed))
	b.WriteString(strconv.Itoa(q.Skip))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(q.Limit))
	return b.String(), true
}

// get returns the records of a kept answer computed under generation gen.
func (c *idCache) get(key, typ string, gen uint64) ([]*store.Record, bool) {
	c.mu.Lock()
	a, ok := c.m[key]
	c.mu.Unlock()
	if !ok || a.gen != gen {
		return nil, false
	}
	recs := make([]*store.Record, len(a.ids))
	bare := make([]store.Record, len(a.ids))
	for i, id := range a.ids {
		bare[i] = store.Record{Type: typ, ID: id}
		recs[i] = &bare[i]
	}
	return recs, true
}

// put keeps the answer recs of key, computed under generation gen.
func (c *idCache) put(key string, gen uint64, recs []*store.Record) {
	if gen != c.gen.Load() {
		return // already stale
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxIDQueries {
		c.m = map[string]idAnswer{}
	}
	c.m[key] = idAnswer{gen: gen, ids: ids}
}

// maxKeyIDs bounds the ids a filter may list in full and still be kept:
// the key is the filter's text, and writing thousands of ids for every
// request would cost more than the answer saves. Lists made by
// arcql.NewInIDs (access rights, hops) print as their digest instead.
const maxKeyIDs = 64

// manyIDs reports whether an id list of a filter written out in full
// (one without a Digest) holds more than n ids.
func manyIDs(e arcql.Expr, n int) bool {
	switch e := e.(type) {
	case *arcql.InIDs:
		return e.Digest == "" && len(e.IDs) > n
	case *arcql.And:
		return anyManyIDs(e.Terms, n)
	case *arcql.Or:
		return anyManyIDs(e.Terms, n)
	case *arcql.Not:
		return manyIDs(e.X, n)
	}
	return false
}

func anyManyIDs(terms []arcql.Expr, n int) bool {
	for _, t := range terms {
		if manyIDs(t, n) {
			return true
		}
	}
	return false
}
