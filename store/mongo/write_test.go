package mongo_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	driver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
)

// TestCreateTakesNoLockDocument: with record locks on (as on FerretDB),
// an upsert of a new id (store.Op.New, or no id at all: PrepareOps
// generates one) inserts no lock document for its record, and leaves
// the record, its change and its usage as the locked path does; an
// upsert of an id the caller chose takes the lock, and so does an upsert
// marked New whose id exists after all, which merges into the record.
func TestCreateTakesNoLockDocument(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var locks []string // the _ids of the lock documents inserted
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if coll, ok := e.Command.Lookup("insert").StringValueOK(); !ok || coll != "locks" {
			return
		}
		docs, ok := e.Command.Lookup("documents").ArrayOK()
		if !ok {
			t.Errorf("an insert into locks without documents: %s", e.Command)
			return
		}
		vals, err := docs.Values()
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, v := range vals {
			locks = append(locks, v.Document().Lookup("_id").StringValue())
		}
	}}
	locked := func(key string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(locks, key)
	}
	st := mongotest.Open(t, mongo.WithCommandMonitor(mon), func(c *mongo.Config) { c.RecordLocks = mongo.LocksOn })
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	set := func() map[string]any {
		return map[string]any{"title": "t", "tags": []any{"a", "b"}, "meta": map[string]any{"k.x": int64(1)}, "gone": nil}
	}
	write := func(op store.Op) store.OpResult {
		t.Helper()
		res, err := st.Write(ctx, "inst1", []store.Op{op}, store.Quota{})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}

	generated := write(store.Op{Kind: store.OpUpsert, Type: "Book", Set: set(), Now: now, CreatedBy: "acc1"})
	id := store.NewID()
	marked := write(store.Op{Kind: store.OpUpsert, Type: "Book", ID: id, New: true, Set: set(), Now: now, CreatedBy: "acc1"})
	chosen := write(store.Op{Kind: store.OpUpsert, Type: "Book", ID: "chosen", Set: set(), Now: now, CreatedBy: "acc1"})
	for _, tc := range []struct {
		name   string
		res    store.OpResult
		locked bool
	}{
		{"no id", generated, false},
		{"new id", marked, false},
		{"chosen id", chosen, true},
	} {
		if !tc.res.Created || tc.res.Record == nil {
			t.Fatalf("%s: %+v, want a create", tc.name, tc.res)
		}
		if got := locked("inst1/Book/" + tc.res.Record.ID); got != tc.locked {
			t.Errorf("%s: a lock document was inserted: %v, want %v", tc.name, got, tc.locked)
		}
		got, err := st.Get(ctx, "inst1", "Book", tc.res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := *chosen.Record
		want.ID = tc.res.Record.ID
		if d := cmp.Diff(&want, got); d != "" {
			t.Errorf("%s: stored record (-as the locked path leaves it +got):\n%s", tc.name, d)
		}
		if d := cmp.Diff(got, tc.res.Record); d != "" {
			t.Errorf("%s: result (-stored +got):\n%s", tc.name, d)
		}
	}

	// A New op whose id exists after all: the locked path, a merge.
	again := write(store.Op{Kind: store.OpUpsert, Type: "Book", ID: id, New: true, Set: map[string]any{"more": int64(2)}, Now: now.Add(time.Second)})
	if again.Created || again.Record.Fields["title"] != "t" || again.Record.Fields["more"] != int64(2) {
		t.Errorf("an upsert marked New of an existing id = %+v, want a merge", again)
	}
	if !locked("inst1/Book/" + id) {
		t.Error("an upsert marked New of an existing id inserted no lock document")
	}

	changes, err := st.Changes(ctx, "inst1", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, string(c.Op)+" "+c.ID)
	}
	want := []string{
		string(store.ChangeCreated) + " " + generated.Record.ID,
		string(store.ChangeCreated) + " " + id,
		string(store.ChangeCreated) + " chosen",
		string(store.ChangeUpdated) + " " + id,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}

	kept, err := st.Usage(ctx, "inst1")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ForgetUsage(ctx, "inst1"); err != nil {
		t.Fatal(err)
	}
	counted, err := st.Usage(ctx, "inst1")
	if err != nil {
		t.Fatal(err)
	}
	if kept.Records != 3 || kept.Records != counted.Records || kept.StorageBytes != counted.StorageBytes {
		t.Errorf("usage kept = %+v, counted = %+v; want 3 records, alike", kept, counted)
	}
}

// TestUsageQueued: a Write does not wait for the $inc of the instance's
// usage. With the usage lock held by someone else (FerretDB, the test
// server, takes it around each $inc), 20 concurrent creates all return
// (a first write has counted the instance and settled, by a Close);
// another process does not count them yet; and once the lock is free,
// Close writes what is queued, so that the other process reads the 20
// records and the bytes the writing process counted.
func TestUsageQueued(t *testing.T) {
	t.Parallel()
	uri, db := mongotest.Database(t)
	ctx := context.Background()
	openStore := func() *mongo.Store {
		s, err := mongo.Open(ctx, mongotest.Config(uri, db))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := openStore(), openStore()
	client, err := driver.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	// A first write counts the instance (ensureUsage, under the lock).
	first := store.Op{Kind: store.OpUpsert, Type: "Note", ID: "first", Set: map[string]any{"body": "f"}, Now: time.Now()}
	if _, err := a.Write(ctx, "inst1", []store.Op{first}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // and writes its usage
		t.Fatal(err)
	}
	a = openStore()
	locks := client.Database(db).Collection("locks")
	held := bson.D{{Key: "_id", Value: "inst1//usage"}, {Key: "exp", Value: time.Now().Add(time.Hour)}}
	if _, err := locks.InsertOne(ctx, held); err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			op := store.Op{Kind: store.OpUpsert, Type: "Note", Set: map[string]any{"body": strings.Repeat("x", i*10)}, Now: now}
			if _, err := a.Write(ctx, "inst1", []store.Op{op}, store.Quota{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if early, err := b.Usage(ctx, "inst1"); err != nil || early.Records != 1 {
		t.Errorf("usage read by another process while the $inc waits = %+v, %v; want the first record only", early, err)
	}
	if _, err := locks.DeleteOne(ctx, bson.D{{Key: "_id", Value: "inst1//usage"}}); err != nil {
		t.Fatal(err)
	}
	mine, err := a.Usage(ctx, "inst1")
	if err != nil {
		t.Fatal(err)
	}
	if mine.Records != n+1 || mine.StorageBytes <= 0 {
		t.Fatalf("usage read by the writing process = %+v, want %d records", mine, n+1)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	theirs, err := b.Usage(ctx, "inst1")
	if err != nil {
		t.Fatal(err)
	}
	if theirs.Records != mine.Records || theirs.StorageBytes != mine.StorageBytes {
		t.Errorf("usage read by another process after Close = %+v, want %+v", theirs, mine)
	}
}

// TestUsageLostAtCloseIsLogged: a usage $inc the server does not take
// (another process holds the usage lock) is logged, and so is what a
// Close then leaves unwritten, naming the instance and the counts.
func TestUsageLostAtCloseIsLogged(t *testing.T) {
	t.Parallel()
	uri, db := mongotest.Database(t)
	ctx := context.Background()
	core, logs := observer.New(zap.WarnLevel)
	cfg := mongotest.Config(uri, db) // Close lets the $inc wait OpTimeout (10 s) for the lock
	cfg.Log = zap.New(core)
	first, err := mongo.Open(ctx, mongotest.Config(uri, db))
	if err != nil {
		t.Fatal(err)
	}
	// A first write counts the instance (ensureUsage, under the lock).
	op := store.Op{Kind: store.OpUpsert, Type: "Note", ID: "first", Set: map[string]any{"body": "f"}, Now: time.Now()}
	if _, err := first.Write(ctx, "inst1", []store.Op{op}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	client, err := driver.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	locks := client.Database(db).Collection("locks")
	if _, err := locks.InsertOne(ctx, bson.D{{Key: "_id", Value: "inst1//usage"}, {Key: "exp", Value: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	s, err := mongo.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	op = store.Op{Kind: store.OpUpsert, Type: "Note", ID: "second", Set: map[string]any{"body": "s"}, Now: time.Now()}
	if _, err := s.Write(ctx, "inst1", []store.Op{op}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := logs.FilterMessageSnippet("writing an instance's usage failed").FilterField(zap.String("instance", "inst1")).Len(); n == 0 {
		t.Errorf("no warning of the failed $inc; logged: %v", logs.All())
	}
	lost := logs.FilterMessageSnippet("the store closed before the server took").FilterField(zap.String("instance", "inst1")).FilterField(zap.Int64("records", 1)).All()
	if len(lost) != 1 || lost[0].Level != zap.ErrorLevel {
		t.Errorf("the lost usage is not logged once as an error naming 1 record: %v", logs.All())
	}
}
