package bolt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/corehq/core/store"
)

const benchN = 10000

// benchBooks opens a store of 10,000 books: an indexed price uniform in
// [0, 100), an indexed unique isbn, an unindexed title. (With b.Loop the
// benchmark function, and so this set-up, runs once.)
func benchBooks(b *testing.B) *Store { return benchBooksWith(b, DefaultConfig()) }

func benchBooksWith(b *testing.B, cfg Config) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	spec := store.TypeSpec{Name: "Book", Indices: [][]string{{"price"}}, Unique: []string{"isbn"}}
	if err := s.Declare(ctx, "bench", []store.TypeSpec{spec}); err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	var ops []store.Op
	for i := range benchN {
		ops = append(ops, store.Op{Kind: store.OpUpsert, Type: "Book", ID: itemID(i), Now: base, Set: map[string]any{
			"isbn":     fmt.Sprintf("isbn-%05d", i),
			"title":    fmt.Sprintf("Title %d", i),
			"authorid": int64(i % 97),
			"price":    float64(rnd.IntN(10000)) / 100,
		}})
		if len(ops) == 1000 {
			if _, err := s.Write(ctx, "bench", ops, store.Quota{}); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	return s
}

func benchFind(b *testing.B, text string, limit, want int) {
	s := benchBooks(b)
	pq := itemQuery(b, "bench", text) // Book's fields bind like Item's
	q := &store.Query{Type: "Book", Filter: pq.Filter, Sort: pq.Sort, Limit: limit}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		recs, err := s.Find(ctx, "bench", q)
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) != want {
			b.Fatalf("%d records, want %d", len(recs), want)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s := benchBooks(b)
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Get(ctx, "bench", "Book", itemID(i%benchN)); err != nil {
			b.Fatal(err)
		}
		i += 7919
	}
}

func BenchmarkFindIndexedEquality(b *testing.B) {
	benchFind(b, "isbn = 'isbn-04242'", 0, 1)
}

func BenchmarkFindUnindexedEquality(b *testing.B) {
	benchFind(b, "title = 'Title 4242'", 0, 1)
}

func BenchmarkFindFirst25PriceOver50(b *testing.B) {
	benchFind(b, "price > 50", 25, 25)
}

func BenchmarkFindFirst25PriceOver50SortedDesc(b *testing.B) {
	benchFind(b, "price > 50 SORT price DESC", 25, 25)
}

// BenchmarkFindNextOffsets is what a page's nextOffsets asks: the ids of
// the next 101 records of `price > 50` after a cursor, ids only, computed
// (as after a write: the id cache is invalidated each time).
func BenchmarkFindNextOffsets(b *testing.B) { benchNextOffsets(b, false) }

// BenchmarkFindNextOffsetsCached is the same served from the id cache.
func BenchmarkFindNextOffsetsCached(b *testing.B) { benchNextOffsets(b, true) }

func benchNextOffsets(b *testing.B, cached bool) {
	s := benchBooks(b)
	pq := itemQuery(b, "bench", "price > 50")
	q := &store.Query{Type: "Book", Filter: pq.Filter, After: itemID(100), Limit: 101, IDsOnly: true}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if !cached {
			s.ids.written()
		}
		recs, err := s.Find(ctx, "bench", q)
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) != 101 {
			b.Fatalf("%d records, want 101", len(recs))
		}
	}
}

func BenchmarkFindFirst25PriceOver99(b *testing.B) {
	benchFind(b, "price > 99", 25, 25)
}

// BenchmarkUpsertMerge writes one merge per transaction, fsync included.
func BenchmarkUpsertMerge(b *testing.B) { benchUpsert(b, DefaultConfig()) }

// BenchmarkUpsertMergeNoSync is the same without fsync: the CPU cost.
func BenchmarkUpsertMergeNoSync(b *testing.B) {
	cfg := DefaultConfig()
	cfg.NoSync = true
	benchUpsert(b, cfg)
}

// BenchmarkUpsertParallel has writers on every CPU, so that writes share
// transactions (group commit).
func BenchmarkUpsertParallel(b *testing.B) {
	s := benchBooks(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer() // the seeding is not the upserts'
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(benchN)
		for pb.Next() {
			op := store.Op{Kind: store.OpUpsert, Type: "Book", ID: itemID(i % benchN), Now: base,
				Set: map[string]any{"price": float64(i%10000) / 100}}
			if _, err := s.Write(ctx, "bench", []store.Op{op}, store.Quota{}); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
}

// BenchmarkCreateNoSync writes one new book per Write, its id made by
// the store, without fsync: the CPU of a create through the group
// commit.
func BenchmarkCreateNoSync(b *testing.B) {
	cfg := DefaultConfig()
	cfg.NoSync = true
	s := benchBooksWith(b, cfg)
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		op := store.Op{Kind: store.OpUpsert, Type: "Book", Now: base,
			Set: map[string]any{"title": "bench book", "authorid": int64(42), "price": float64(i%10000) / 100}}
		res, err := s.Write(ctx, "bench", []store.Op{op}, store.Quota{})
		if err != nil {
			b.Fatal(err)
		}
		if !res[0].Created {
			b.Fatal("not created")
		}
		i++
	}
}

// BenchmarkCreateParallelNoSync is the same from writers on every CPU,
// so that creates share transactions (group commit) as in a server under
// load. Its allocations per op depend on how many writes a commit
// gathers.
func BenchmarkCreateParallelNoSync(b *testing.B) {
	cfg := DefaultConfig()
	cfg.NoSync = true
	s := benchBooksWith(b, cfg)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer() // not the set-up: RunParallel runs it for each b.N tried
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			op := store.Op{Kind: store.OpUpsert, Type: "Book", Now: base,
				Set: map[string]any{"title": "bench book", "authorid": int64(42), "price": 17.0}}
			if _, err := s.Write(ctx, "bench", []store.Op{op}, store.Quota{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchUpsert(b *testing.B, cfg Config) {
	s := benchBooksWith(b, cfg)
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		op := store.Op{Kind: store.OpUpsert, Type: "Book", ID: itemID(i % benchN), Now: base,
			Set: map[string]any{"price": float64(i%10000) / 100}}
		if _, err := s.Write(ctx, "bench", []store.Op{op}, store.Quota{}); err != nil {
			b.Fatal(err)
		}
		i += 7919
	}
}

// BenchmarkAggregatePriceOver50: count, sum and average of the prices
// above 50 (about half the books), the filter on the price index.
func BenchmarkAggregatePriceOver50(b *testing.B) {
	pq := itemQuery(b, "bench", "price > 50")
	benchAggregate(b, &store.AggQuery{Type: "Book", Filter: pq.Filter, Fields: []store.AggField{{Field: "price"}}, Ints: []string{"authorid"}},
		func(gs []*store.Group) bool { return gs[0].Count >= benchN/3 && gs[0].Count <= benchN*2/3 })
}

// BenchmarkAggregateGroupBy: the same per authorid (97 groups), every
// book.
func BenchmarkAggregateGroupBy(b *testing.B) {
	benchAggregate(b, &store.AggQuery{Type: "Book", Fields: []store.AggField{{Field: "price"}}, GroupBy: []store.GroupKey{{Field: "authorid"}}},
		func(gs []*store.Group) bool { return len(gs) == 97 })
}

// benchAggregate runs q on the benchmark's books; ok checks each answer.
func benchAggregate(b *testing.B, q *store.AggQuery, ok func([]*store.Group) bool) {
	s := benchBooks(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		gs, err := s.Aggregate(ctx, "bench", q)
		if err != nil {
			b.Fatal(err)
		}
		if !ok(gs) {
			b.Fatalf("an unexpected answer: %d groups, the first of %d records", len(gs), gs[0].Count)
		}
	}
}
