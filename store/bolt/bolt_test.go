package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/storetest"
)

// openTemp opens a store in a new temporary directory, closed when the test
// ends.
func openTemp(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "core.db"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.NoSync = true
	cfg.HopLimit = 20
	return cfg
}

func TestConformance(t *testing.T) {
	storetest.RunWith(t, func(t *testing.T) store.Store {
		return openTemp(t, testConfig())
	}, storetest.Options{HopLimit: testConfig().HopLimit, Reopen: reopen, ForgetUsage: forgetUsage,
		OpenRetention: func(t *testing.T, r store.Retention) store.Store {
			cfg := testConfig()
			cfg.Retention = r
			return openTemp(t, cfg)
		}})
}

// forgetUsage deletes the instance's usage key, as in a file written
// before usage was kept.
func forgetUsage(t *testing.T, s store.Store, inst string) {
	t.Helper()
	err := s.(*Store).db.Update(func(tx *bbolt.Tx) error {
		if ib := instBucket(tx, inst); ib != nil {
			return ib.Delete(keyUsage)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// reopen closes s and opens its file again.
func reopen(t *testing.T, s store.Store) store.Store {
	t.Helper()
	path := s.(*Store).db.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	n, err := Open(path, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "core.db")
	s, err := Open(path, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	loadItems(t, s, "inst", 300)
	if err := s.PutDoc(ctx, "apps", "a", []byte("doc")); err != nil {
		t.Fatal(err)
	}
	before, err := s.Get(ctx, "inst", "Item", itemID(7))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	after, err := s.Get(ctx, "inst", "Item", itemID(7))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("record after reopen (-before +after):\n%s", d)
	}
	if doc, err := s.GetDoc(ctx, "apps", "a"); err != nil || string(doc) != "doc" {
		t.Errorf("GetDoc after reopen = %q, %v", doc, err)
	}
	// The declared indexes are still there and used, without a Declare.
	recs, info := mustFind(t, s, "inst", itemQuery(t, "inst", "cat = 'c3'"))
	if len(recs) != 30 || info.Kind != planEqStream || info.Loaded != 30 {
		t.Errorf("found %d with plan %+v, want 30 through the cat index", len(recs), info)
	}
	// Declaring the same types again writes nothing.
	gen := func() uint64 {
		var g uint64
		s.view(func(tx *bbolt.Tx) error { g = getU64(instBucket(tx, "inst").Get(keyGen)); return nil })
		return g
	}
	g := gen()
	if err := s.Declare(ctx, "inst", []store.TypeSpec{itemSpec}); err != nil {
		t.Fatal(err)
	}
	if gen() != g {
		t.Error("an unchanged Declare took a new generation")
	}
	// Writes after the reopen keep the indexes (and uniqueness) right.
	if _, err := s.Write(ctx, "inst", []store.Op{{Kind: store.OpUpsert, Type: "Item", ID: itemID(3), Set: map[string]any{"cat": "new"}, Now: base}}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.Find(ctx, "inst", itemQuery(t, "inst", "cat = 'new'")); len(recs) != 1 {
		t.Errorf("cat = 'new' finds %d records", len(recs))
	}
	_, err = s.Write(ctx, "inst", []store.Op{{Kind: store.OpUpsert, Type: "Item", ID: "dup", Set: map[string]any{"title": "t00003"}, Now: base}}, store.Quota{})
	if !errors.Is(err, store.ErrUnique) {
		t.Errorf("duplicate title after reopen: %v, want ErrUnique", err)
	}
}

func TestDeclare(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, testConfig())
	write := func(ops ...store.Op) {
		t.Helper()
		if _, err := s.Write(ctx, "i", ops, store.Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	write(
		store.Op{Kind: store.OpUpsert, Type: "A", ID: "1", Set: map[string]any{"u": "x", "v": int64(1)}},
		store.Op{Kind: store.OpUpsert, Type: "A", ID: "2", Set: map[string]any{"u": "x", "v": int64(2)}},
	)
	spec := store.TypeSpec{Name: "A", Indices: [][]string{{"u"}}}
	if err := s.Declare(ctx, "i", []store.TypeSpec{spec}); err != nil {
		t.Fatal(err)
	}
	buckets := func() []string {
		var names []string
		s.view(func(tx *bbolt.Tx) error {
			xb := instBucket(tx, "i").Bucket(bucketIdx)
			if xb == nil || xb.Bucket([]byte("A")) == nil {
				return nil
			}
			return xb.Bucket([]byte("A")).ForEachBucket(func(k []byte) error {
				names = append(names, string(k))
				return nil
			})
		})
		return names
	}
	t.Run("unique over duplicates fails and changes nothing", func(t *testing.T) {
		bad := store.TypeSpec{Name: "A", Unique: []string{"u", "v"}}
		err := s.Declare(ctx, "i", []store.TypeSpec{bad})
		var fe *store.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, store.ErrUnique) || fe.Field != "u" || fe.Value != "x" {
			t.Fatalf("Declare = %v, want a FieldError for A.u = x", err)
		}
		if d := cmp.Diff([]string{"u"}, buckets()); d != "" {
			t.Errorf("index buckets (-want +got):\n%s", d)
		}
		// The old declaration still holds: u is not unique.
		write(store.Op{Kind: store.OpUpsert, Type: "A", ID: "3", Set: map[string]any{"u": "x"}})
	})
	t.Run("new and dropped indexes", func(t *testing.T) {
		next := store.TypeSpec{Name: "A", Indices: [][]string{{"v"}, {"u", "v"}}, Refs: []string{"r"}}
		if err := s.Declare(ctx, "i", []store.TypeSpec{next}); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"r", "u,v", "v"}, buckets()); d != "" {
			t.Errorf("index buckets (-want +got):\n%s", d)
		}
	})
	t.Run("type no longer declared", func(t *testing.T) {
		if err := s.Declare(ctx, "i", []store.TypeSpec{{Name: "B"}}); err != nil {
			t.Fatal(err)
		}
		if got := buckets(); len(got) != 0 {
			t.Errorf("index buckets of an undeclared type: %v", got)
		}
		if _, err := s.Get(ctx, "i", "A", "1"); err != nil {
			t.Errorf("records of an undeclared type: %v", err)
		}
	})
	t.Run("bad specs", func(t *testing.T) {
		for _, specs := range [][]store.TypeSpec{
			{{Name: ""}},
			{{Name: "A"}, {Name: "A"}},
			{{Name: "A", Indices: [][]string{{"a,b"}}}},
			{{Name: "A", Unique: []string{""}}},
		} {
			if err := s.Declare(ctx, "i", specs); err == nil {
				t.Errorf("Declare(%+v) accepted", specs)
			}
		}
	})
}

func TestWriteDetails(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, testConfig())
	t.Run("generated id", func(t *testing.T) {
		res, err := s.Write(ctx, "i", []store.Op{{Kind: store.OpUpsert, Type: "A", Set: map[string]any{"x": 1}}}, store.Quota{})
		if err != nil {
			t.Fatal(err)
		}
		if id := res[0].Record.ID; len(id) != store.IDLen {
			t.Errorf("generated id %q", id)
		}
		if res[0].Record.Fields["x"] != int64(1) {
			t.Errorf("int not normalized: %#v", res[0].Record.Fields["x"])
		}
	})
	bad := []struct {
		name string
		inst string
		op   store.Op
	}{
		{"empty instance", "", store.Op{Kind: store.OpUpsert, Type: "A"}},
		{"empty type", "i", store.Op{Kind: store.OpUpsert}},
		{"unknown kind", "i", store.Op{Kind: 99, Type: "A", ID: "1"}},
		{"delete without id", "i", store.Op{Kind: store.OpDelete, Type: "A"}},
		{"ref op without field", "i", store.Op{Kind: store.OpAddRef, Type: "A", ID: "1", RefID: "x"}},
		{"unsupported value", "i", store.Op{Kind: store.OpUpsert, Type: "A", Set: map[string]any{"x": struct{}{}}}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Write(ctx, tt.inst, []store.Op{tt.op}, store.Quota{}); err == nil {
				t.Error("accepted")
			}
		})
	}
	t.Run("ref op on a scalar", func(t *testing.T) {
		if _, err := s.Write(ctx, "i", []store.Op{{Kind: store.OpUpsert, Type: "A", ID: "s", Set: map[string]any{"f": "scalar"}}}, store.Quota{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(ctx, "i", []store.Op{{Kind: store.OpAddRef, Type: "A", ID: "s", Field: "f", RefID: "x"}}, store.Quota{}); err == nil {
			t.Error("AddRef on a string field accepted")
		}
	})
	t.Run("no ops", func(t *testing.T) {
		if res, err := s.Write(ctx, "i", nil, store.Quota{}); err != nil || len(res) != 0 {
			t.Errorf("Write(nil) = %v, %v", res, err)
		}
	})
}

func TestUnavailableAndCanceled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	s, err := Open(path, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("locked file", func(t *testing.T) {
		cfg := testConfig()
		cfg.OpenTimeout = 50 * time.Millisecond
		if _, err := Open(path, cfg); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("second Open = %v, want ErrUnavailable", err)
		}
	})
	t.Run("canceled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.Get(ctx, "i", "A", "1"); !errors.Is(err, context.Canceled) {
			t.Errorf("Get = %v", err)
		}
		if _, err := s.Find(ctx, "i", &store.Query{Type: "A"}); !errors.Is(err, context.Canceled) {
			t.Errorf("Find = %v", err)
		}
		if _, err := s.Write(ctx, "i", []store.Op{{Kind: store.OpUpsert, Type: "A"}}, store.Quota{}); !errors.Is(err, context.Canceled) {
			t.Errorf("Write = %v", err)
		}
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("closed", func(t *testing.T) {
		ctx := context.Background()
		if err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("Ping = %v", err)
		}
		if _, err := s.Get(ctx, "i", "A", "1"); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("Get = %v", err)
		}
		if _, err := s.Write(ctx, "i", []store.Op{{Kind: store.OpUpsert, Type: "A"}}, store.Quota{}); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("Write = %v", err)
		}
	})
}

func TestContentsConformance(t *testing.T) {
	storetest.RunContents(t, func(t *testing.T) store.Store { return openTemp(t, testConfig()) })
}
