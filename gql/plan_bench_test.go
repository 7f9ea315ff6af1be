package gql

import (
	"context"
	"sync"
	"testing"

	"github.com/corehq/core/store"
)

// Benchmarks of the executors side by side. BenchmarkGet and
// BenchmarkFind25 (bench_test.go) run on the compiled plan; the Reference
// variants force graphql.Execute; the Engine variants answer the store's
// reads from memory, so that what remains is the GraphQL engine and the
// resolvers.

var (
	getRequest = Request{
		Query:     `query($id: String!) { get(type: Book, id: $id) { ... on Book { title authorid price core { id created updated } } } }`,
		Variables: map[string]any{"id": "b00500"},
	}
	find25Request = Request{
		Query: `query($q: String!) { find(type: Book, arcql: $q, first: 25) { edges { cursor node { ... on Book { title authorid price core { id created updated } } } }
			pageInfo { hasNextPage endCursor pageLimit } } }`,
		Variables: map[string]any{"q": "price > 50"},
	}
)

func BenchmarkGetReference(b *testing.B)          { benchExecutor(b, getRequest, true, false) }
func BenchmarkFind25Reference(b *testing.B)       { benchExecutor(b, find25Request, true, false) }
func BenchmarkGetEngine(b *testing.B)             { benchExecutor(b, getRequest, false, true) }
func BenchmarkGetEngineReference(b *testing.B)    { benchExecutor(b, getRequest, true, true) }
func BenchmarkFind25Engine(b *testing.B)          { benchExecutor(b, find25Request, false, true) }
func BenchmarkFind25EngineReference(b *testing.B) { benchExecutor(b, find25Request, true, true) }

// benchExecutor measures req over 1,000 books on graphql.Execute
// (reference) or the compiled plan, with the store's reads answered from
// memory (memo) or from the store.
func benchExecutor(b *testing.B, req Request, reference, memo bool) {
	s, env := benchEnv(b, 1000)
	s.referenceOnly = reference
	if memo {
		env.Store = &memoStore{Store: env.Store}
	}
	benchDo(b, s, env, req)
}

// memoStore answers a repeated Get or Find from memory: the records read
// the first time (resolvers do not change records).
type memoStore struct {
	store.Store
	mu    sync.Mutex
	gets  map[string]*store.Record
	finds []memoFind
}

type memoFind struct {
	q    store.Query
	recs []*store.Record
}

func (m *memoStore) Get(ctx context.Context, inst, typ, id string) (*store.Record, error) {
	m.mu.Lock()
	r, ok := m.gets[typ+"/"+id]
	m.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := m.Store.Get(ctx, inst, typ, id)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gets == nil {
		m.gets = map[string]*store.Record{}
	}
	m.gets[typ+"/"+id] = r
	return r, nil
}

func (m *memoStore) Find(ctx context.Context, inst string, q *store.Query) ([]*store.Record, error) {
	m.mu.Lock()
	for _, f := range m.finds {
		if f.q.Type == q.Type && f.q.Limit == q.Limit && f.q.After == q.After && f.q.Before == q.Before &&
			f.q.Skip == q.Skip && f.q.Backward == q.Backward {
			m.mu.Unlock()
			return f.recs, nil
		}
	}
	m.mu.Unlock()
	recs, err := m.Store.Find(ctx, inst, q)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finds = append(m.finds, memoFind{q: *q, recs: recs})
	return recs, nil
}
