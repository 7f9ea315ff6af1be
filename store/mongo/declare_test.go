package mongo_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
)

// TestDeclareNewInstanceReadsNoRecords: the Declare of an instance new to
// the database (how an instance is created, and an import's target)
// sends no query over the records collection, which every instance
// shares: a server that scans for such a query (FerretDB over SQLite)
// would read every other instance's records first. It still claims and
// counts what an instance already holds, whether its records came before
// its first Declare (loaded or written) or after it.
func TestDeclareNewInstanceReadsNoRecords(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var reads []string // the commands that read the records collection
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		switch e.CommandName {
		case "find", "aggregate", "count", "distinct", "delete", "update", "findAndModify":
			if coll, ok := e.Command.Lookup(e.CommandName).StringValueOK(); ok && coll == "records" {
				mu.Lock()
				reads = append(reads, e.Command.String())
				mu.Unlock()
			}
		}
	}}
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := reads
		reads = nil
		return out
	}
	st := mongotest.Open(t, mongo.WithCommandMonitor(mon))
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	book := func(id, title string) *store.Record {
		return &store.Record{Type: "Book", ID: id, Created: now, Updated: now, Fields: map[string]any{"title": title}}
	}
	types := []store.TypeSpec{{Name: "Account", Unique: []string{"username", "email"}}, {Name: "Book", Unique: []string{"isbn"}}}

	// Another instance's records.
	if err := st.Declare(ctx, "big", types); err != nil {
		t.Fatal(err)
	}
	if err := st.Load(ctx, "big", []*store.Record{book("b1", "one"), book("b2", "two"), book("b3", "three")}); err != nil {
		t.Fatal(err)
	}

	taken()
	if err := st.Declare(ctx, "new", types); err != nil {
		t.Fatal(err)
	}
	if got := taken(); len(got) > 0 {
		t.Errorf("the Declare of a new instance read the records collection: %q", got)
	}
	if u, err := st.Usage(ctx, "new"); err != nil || u.Records != 0 || u.StorageBytes != 0 {
		t.Errorf("usage of the new instance: %+v, %v; want none", u, err)
	}
	if got := taken(); len(got) > 0 {
		t.Errorf("the usage of a new instance was counted from the records collection: %q", got)
	}
	// Its records count and its unique values are claimed from then on.
	if err := st.Load(ctx, "new", []*store.Record{
		{Type: "Book", ID: "n1", Created: now, Updated: now, Fields: map[string]any{"title": "a", "isbn": "x"}},
	}); err != nil {
		t.Fatal(err)
	}
	_, err := st.Write(ctx, "new", []store.Op{{Kind: store.OpUpsert, Type: "Book", ID: "n2", Set: map[string]any{"isbn": "x"}, Now: now}}, store.Quota{})
	if !errors.Is(err, store.ErrUnique) {
		t.Errorf("a second book with isbn x: %v, want %v", err, store.ErrUnique)
	}
	if u, err := st.Usage(ctx, "new"); err != nil || u.Records != 1 {
		t.Errorf("usage of the new instance after a load: %+v, %v; want 1 record", u, err)
	}
	// A field becoming unique on an instance with records: its values are
	// claimed from the records (which the monitor sees).
	taken()
	types[1].Unique = append(types[1].Unique, "title")
	if err := st.Declare(ctx, "new", types); err != nil {
		t.Fatal(err)
	}
	if got := taken(); len(got) == 0 {
		t.Error("a field becoming unique on an instance with records: no records read to claim its values")
	}

	// Records loaded, or written, before an instance's first Declare are
	// seen: their duplicates fail it.
	if err := st.Load(ctx, "loaded", []*store.Record{book("l1", "same"), book("l2", "same")}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"w1", "w2"} {
		if _, err := st.Write(ctx, "written", []store.Op{{Kind: store.OpUpsert, Type: "Book", ID: id, Set: map[string]any{"title": "same"}, Now: now}}, store.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	unique := []store.TypeSpec{{Name: "Book", Unique: []string{"title"}}}
	for _, inst := range []string{"loaded", "written"} {
		var fe *store.FieldError
		if err := st.Declare(ctx, inst, unique); !errors.Is(err, store.ErrUnique) || !errors.As(err, &fe) || fe.Field != "title" {
			t.Errorf("%s: declaring title unique over two books titled alike: %v, want %v on title", inst, err, store.ErrUnique)
		}
		if u, err := st.Usage(ctx, inst); err != nil || u.Records != 2 {
			t.Errorf("%s: usage %+v, %v; want 2 records", inst, u, err)
		}
	}
}

// TestDropLargeInstance: an instance of more records than one step of a
// drop deletes is dropped whole, step by step (the deletes the client
// sends each name at most a step's records), and another instance's
// records stay.
func TestDropLargeInstance(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	deletes := 0
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if coll, ok := e.Command.Lookup("delete").StringValueOK(); ok && coll == "records" {
			mu.Lock()
			deletes++
			mu.Unlock()
		}
	}}
	st := mongotest.Open(t, mongo.WithCommandMonitor(mon))
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, inst := range []string{"large", "other"} {
		if err := st.Declare(ctx, inst, []store.TypeSpec{{Name: "Book"}}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 2*mongo.DropBatch + 7
	var batch []*store.Record
	for i := range n {
		batch = append(batch, &store.Record{Type: "Book", ID: fmt.Sprintf("b%06d", i), Created: now, Updated: now, Fields: map[string]any{"n": int64(i)}})
		if len(batch) == 2000 || i == n-1 {
			if err := st.Load(ctx, "large", batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	if err := st.Load(ctx, "other", []*store.Record{{Type: "Book", ID: "kept", Created: now, Updated: now, Fields: map[string]any{"n": int64(1)}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.DropInstance(ctx, "large"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "large", "Book", "b000000"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a record of the dropped instance: %v, want not found", err)
	}
	if _, err := st.Get(ctx, "large", "Book", fmt.Sprintf("b%06d", n-1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the last record of the dropped instance: %v, want not found", err)
	}
	if u, err := st.Usage(ctx, "large"); err != nil || u.Records != 0 {
		t.Errorf("the dropped instance's usage: %+v %v, want no records", u, err)
	}
	if _, err := st.Get(ctx, "other", "Book", "kept"); err != nil {
		t.Errorf("the other instance's record: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if deletes < 3 {
		t.Errorf("the drop sent %d deletes of records, want one a step (at least 3 for %d records)", deletes, n)
	}
}
