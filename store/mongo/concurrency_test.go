package mongo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/store/storetest"
)

// TestConcurrentUpserts: 100 concurrent upserts of one id, each setting a
// different field, make one record holding all 100 fields, and exactly one
// of them reports the create; in one process, and spread over two sharing
// a database.
func TestConcurrentUpserts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stores func(t *testing.T) []*mongo.Store
	}{
		{"one process", func(t *testing.T) []*mongo.Store { return []*mongo.Store{mongotest.Open(t)} }},
		{"two processes", func(t *testing.T) []*mongo.Store { return mongotest.Shared(t, 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			concurrentUpserts(t, tc.stores(t))
		})
	}
}

func concurrentUpserts(t *testing.T, stores []*mongo.Store) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const n = 100
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := stores[i%len(stores)].Write(ctx, "inst1", []store.Op{{
				Kind: store.OpUpsert, Type: "Book", ID: "one", Now: now,
				Set: map[string]any{fmt.Sprintf("f%03d", i): int64(i)},
			}}, store.Quota{})
			if err != nil {
				t.Errorf("upsert %d: %v", i, err)
				return
			}
			created[i] = res[0].Created
		}()
	}
	wg.Wait()
	s := stores[0]
	r, err := s.Get(ctx, "inst1", "Book", "one")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Fields) != n {
		t.Errorf("the record holds %d fields, want %d", len(r.Fields), n)
	}
	for i := range n {
		if v := r.Fields[fmt.Sprintf("f%03d", i)]; v != int64(i) {
			t.Errorf("f%03d = %v, want %d", i, v, i)
		}
	}
	creates := 0
	for _, c := range created {
		if c {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("%d upserts report the create, want 1", creates)
	}
	recs, err := s.Find(ctx, "inst1", &store.Query{Type: "Book"})
	if err != nil || len(recs) != 1 {
		t.Errorf("Find = %d records, %v; want one record", len(recs), err)
	}
}

// TestUsageConcurrentWriters: 64 writers spread over two processes (two
// Stores on one database) create records of new and of chosen ids,
// update records they all share, do math on them, trash and delete, all
// in one instance; afterwards the usage kept equals a recount of the
// records there, records and bytes.
func TestUsageConcurrentWriters(t *testing.T) {
	t.Parallel()
	stores := mongotest.Shared(t, 2)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const inst, writers, rounds, shared = "inst1", 64, 3, 4
	one := 1.0
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%2]
			for i := range rounds {
				body := strings.Repeat("x", (w*7+i*13)%200)
				own := fmt.Sprintf("w%02d-%d", w, i)
				sh := fmt.Sprintf("shared%d", w%shared)
				ops := []store.Op{
					{Kind: store.OpUpsert, Type: "Note", Set: map[string]any{"body": body}, Now: now}, // a new id
					{Kind: store.OpUpsert, Type: "Note", ID: own, Set: map[string]any{"body": body}, Now: now},
					{Kind: store.OpUpsert, Type: "Note", ID: sh, Set: map[string]any{fmt.Sprintf("w%02d", w): body}, Now: now},
					{Kind: store.OpMath, Type: "Note", ID: sh, Math: map[string]store.Arith{"n": {Plus: &one}}, Now: now},
					{Kind: store.OpTrash, Type: "Note", ID: own, Now: now},
				}
				if i > 0 {
					ops = append(ops, store.Op{Kind: store.OpDelete, Type: "Note", ID: fmt.Sprintf("w%02d-%d", w, i-1), Now: now})
				}
				if _, err := s.Write(ctx, inst, ops, store.Quota{}); err != nil {
					t.Errorf("writer %d, round %d: %v", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Each process writes what its Writes added a moment after they
	// return: the other's is in once it has settled.
	if err := stores[1].SettleUsage(ctx, inst); err != nil {
		t.Fatal(err)
	}
	s := stores[0]
	kept, err := s.Usage(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	// Forgotten, the usage reads as a count of the records there.
	if err := s.ForgetUsage(ctx, inst); err != nil {
		t.Fatal(err)
	}
	counted, err := s.Usage(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Records != counted.Records || kept.StorageBytes != counted.StorageBytes {
		t.Errorf("usage kept = %d records, %d bytes; counted = %d records, %d bytes",
			kept.Records, kept.StorageBytes, counted.Records, counted.StorageBytes)
	}
	// New ids each round, each writer's last own record, the shared ones.
	if want := int64(writers*rounds + writers + shared); counted.Records != want {
		t.Errorf("%d records, want %d", counted.Records, want)
	}
	for i := range shared {
		r, err := s.Get(ctx, inst, "Note", fmt.Sprintf("shared%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(writers / shared * rounds); r.Fields["n"] != want {
			t.Errorf("shared%d.n = %v, want %v", i, r.Fields["n"], want)
		}
	}
}

// TestChangesConcurrentWriters: 32 writers spread over two processes
// create, update and delete records of their own, create records of new
// ids and update records they share, in one instance. Every write's
// change is in the feed exactly once, the numbers run 1..N without a
// gap, and each record's changes are in the order its writers wrote
// them.
func TestChangesConcurrentWriters(t *testing.T) {
	t.Parallel()
	stores := mongotest.Shared(t, 2)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const inst, writers, rounds, shared = "inst1", 32, 4, 3
	fresh := make([][]string, writers) // the new ids each writer created
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%2]
			own := fmt.Sprintf("w%02d", w)
			write := func(ops ...store.Op) []store.OpResult {
				res, err := s.Write(ctx, inst, ops, store.Quota{})
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
				}
				return res
			}
			for i := range rounds {
				res := write(
					store.Op{Kind: store.OpUpsert, Type: "Note", ID: own, Set: map[string]any{fmt.Sprintf("r%d", i): int64(i)}, Now: now},
					store.Op{Kind: store.OpUpsert, Type: "Note", Set: map[string]any{"by": own}, Now: now},
				)
				if res == nil {
					return
				}
				fresh[w] = append(fresh[w], res[1].Record.ID)
				if write(store.Op{Kind: store.OpUpsert, Type: "Note", ID: fmt.Sprintf("s%d", w%shared),
					Set: map[string]any{fmt.Sprintf("%s_%d", own, i): int64(i)}, Now: now}) == nil {
					return
				}
			}
			write(store.Op{Kind: store.OpDelete, Type: "Note", ID: own, Now: now})
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	var feed []store.Change
	for {
		page, err := stores[1].Changes(ctx, inst, uint64(len(feed)), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		feed = append(feed, page...)
	}
	// Own records: rounds changes and a delete; new ids: a create each;
	// shared records: one change per write.
	if want := writers*(rounds+1) + writers*rounds + writers*rounds; len(feed) != want {
		t.Errorf("%d changes, want %d", len(feed), want)
	}
	byRecord := map[string][]store.Change{}
	for i, c := range feed {
		if c.Seq != uint64(i+1) {
			t.Fatalf("change %d has number %d: a gap or a repeat", i+1, c.Seq)
		}
		byRecord[c.ID] = append(byRecord[c.ID], c)
	}
	for w := range writers {
		own := fmt.Sprintf("w%02d", w)
		var got []string
		for _, c := range byRecord[own] {
			got = append(got, fmt.Sprintf("%s %v", c.Op, c.Changed))
		}
		want := []string{fmt.Sprintf("%s [r0]", store.ChangeCreated)}
		for i := 1; i < rounds; i++ {
			want = append(want, fmt.Sprintf("%s [r%d]", store.ChangeUpdated, i))
		}
		want = append(want, fmt.Sprintf("%s []", store.ChangeDeleted))
		if !slices.Equal(got, want) {
			t.Errorf("changes of %s = %q, want %q", own, got, want)
		}
		for _, id := range fresh[w] {
			if cs := byRecord[id]; len(cs) != 1 || cs[0].Op != store.ChangeCreated {
				t.Errorf("changes of new record %s = %+v, want one create", id, cs)
			}
		}
	}
	for i := range shared {
		id := fmt.Sprintf("s%d", i)
		next := map[string]int{} // writer → its next round on this record
		for k, c := range byRecord[id] {
			if want := store.ChangeUpdated; k == 0 {
				want = store.ChangeCreated
				if c.Op != want {
					t.Errorf("change %d of %s is %s, want %s", c.Seq, id, c.Op, want)
				}
			} else if c.Op != want {
				t.Errorf("change %d of %s is %s, want %s", c.Seq, id, c.Op, want)
			}
			var w string
			var round int
			if len(c.Changed) != 1 {
				t.Errorf("change %d of %s changed %v, want one field", c.Seq, id, c.Changed)
				continue
			}
			if _, err := fmt.Sscanf(strings.Replace(c.Changed[0], "_", " ", 1), "%s %d", &w, &round); err != nil {
				t.Fatalf("change %d of %s: field %s: %v", c.Seq, id, c.Changed[0], err)
			}
			if round != next[w] {
				t.Errorf("change %d of %s is round %d of %s, want round %d", c.Seq, id, round, w, next[w])
			}
			next[w] = round + 1
		}
		for w := range writers {
			if w%shared == i && next[fmt.Sprintf("w%02d", w)] != rounds {
				t.Errorf("%s holds %d changes of w%02d, want %d", id, next[fmt.Sprintf("w%02d", w)], w, rounds)
			}
		}
	}
}

// TestFeedContentionShared: a process that loses a change number to
// another takes care numbering the instance's changes (it reads the
// newest number before each insert) and stamps the instance's heads
// document; a process that never loses one takes care once it reads a
// fresh stamp (each raise of the hint returns it); a process alone with
// an instance, its writes back to back, takes no care.
func TestFeedContentionShared(t *testing.T) {
	t.Parallel()
	stores := mongotest.Shared(t, 3)
	a, b, c := stores[0], stores[1], stores[2]
	ctx := context.Background()
	write := func(s *mongo.Store, inst string) {
		t.Helper()
		op := store.Op{Kind: store.OpUpsert, Type: "Note", Set: map[string]any{"n": int64(1)}, Now: time.Now()}
		if _, err := s.Write(ctx, inst, []store.Op{op}, store.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		write(a, "solo")
	}
	if a.Contended("solo") {
		t.Error("a process alone with an instance takes care")
	}

	write(a, "inst1") // a knows number 1 as its own newest
	write(b, "inst1") // b reads the newest (the hint, or the feed), takes 2
	if a.Contended("inst1") || b.Contended("inst1") {
		t.Fatal("contended before any number was lost")
	}
	write(a, "inst1") // a tries 2 without reading: lost to b, then 3
	if !a.Contended("inst1") {
		t.Fatal("the process that lost a number takes no care")
	}
	// The stamp: at once, and again with a's raises of the hint while its
	// loss is recent (b's raise may have written the document over it:
	// FerretDB rewrites the whole document). The raise follows each
	// write's flush, and the next write's flush waits for it.
	for i := 0; ; i++ {
		stamped, err := a.ContentionStamped(ctx, "inst1")
		if err != nil {
			t.Fatal(err)
		}
		if stamped {
			break
		}
		if i == 20 {
			t.Fatal("no stamp on the heads document after a lost number")
		}
		write(a, "inst1")
	}
	changes, err := a.Changes(ctx, "inst1", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range changes {
		if ch.Seq != uint64(i+1) {
			t.Fatalf("change %d has number %d: the feed has a gap", i, ch.Seq)
		}
	}

	// c alone writes "quiet", so it never loses a number there; once
	// another process stamps it, c's next raise of the hint (the after
	// work of its flush, which the flush of its next write waits for)
	// makes it careful. Each round stamps afresh, so that a slow machine
	// cannot outlast the stamp.
	write(c, "quiet")
	if c.Contended("quiet") {
		t.Fatal("contended before any stamp")
	}
	for i := 0; !c.Contended("quiet"); i++ {
		if i == 20 {
			t.Fatal("a stamped instance never made the process that writes it careful")
		}
		b.StampContention(ctx, "quiet")
		write(c, "quiet")
		write(c, "quiet")
	}
}

// TestKeepTwoProcesses: writers in two processes that all create one
// record, each with its own value of a field the record keeps
// (store.Op.Keep): one creates it, every other fails with ErrImmutable,
// and the record holds the creator's value.
func TestKeepTwoProcesses(t *testing.T) {
	t.Parallel()
	stores := mongotest.Shared(t, 2)
	storetest.KeepRace(t, []store.Store{stores[0], stores[1]}, "inst1")
}
