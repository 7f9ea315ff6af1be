package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
)

// snapshotRecords reads every record of inst through a snapshot.
func (e *env) snapshotRecords(sn store.Snapshot, inst string) []*store.Record {
	e.t.Helper()
	var out []*store.Record
	if err := sn.Records(e.ctx, inst, func(r *store.Record) error {
		out = append(out, r)
		return nil
	}); err != nil {
		e.t.Fatalf("Snapshot.Records(%s): %v", inst, err)
	}
	return out
}

// testSnapshot takes a snapshot of an instance with records of several
// types (one trashed), counters and documents, and loads its records into
// a new instance, which then answers as the first did.
func testSnapshot(t *testing.T, e *env) {
	e.loadLibrary(e.inst)
	e.write(upsert("Account", "u1", at(40), map[string]any{"username": "ann", "emails": []any{"a@x"}}),
		store.Op{Kind: store.OpTrash, Type: "Book", ID: bookID(2), Now: at(41)})
	if err := e.s.AddCounters(e.ctx, map[string]map[string]int64{e.inst: {"requests": 7}}); err != nil {
		t.Fatal(err)
	}
	kind := "snap-" + store.NewID()
	for _, k := range []string{"k2", "k1"} {
		if err := e.s.PutDoc(e.ctx, kind, k, []byte("doc "+k)); err != nil {
			t.Fatal(err)
		}
	}
	var want []*store.Record
	for _, typ := range []string{"Account", "Author", "Book"} {
		q := e.query(e.inst, typ, "")
		q.IncludeTrashed = true
		recs, err := e.s.Find(e.ctx, e.inst, q)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, recs...)
	}

	sn, err := e.s.Snapshot(e.ctx)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	defer sn.Close()
	insts, err := sn.Instances(e.ctx)
	if err != nil || !slices.Contains(insts, e.inst) || !slices.IsSorted(insts) {
		t.Errorf("Instances = %v, %v; want a sorted list holding %s", insts, err, e.inst)
	}
	got := e.snapshotRecords(sn, e.inst)
	slices.SortFunc(got, func(a, b *store.Record) int { return strings.Compare(a.Type+"/"+a.ID, b.Type+"/"+b.ID) })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Snapshot.Records (-want +got):\n%s", d)
	}
	if c, err := sn.Counters(e.ctx, e.inst); err != nil || c["requests"] != 7 {
		t.Errorf("Counters = %v, %v; want requests 7", c, err)
	}
	kinds, err := sn.DocKinds(e.ctx)
	if err != nil || !slices.Contains(kinds, kind) {
		t.Errorf("DocKinds = %v, %v; want %s among them", kinds, err, kind)
	}
	var keys []string
	if err := sn.Docs(e.ctx, kind, func(key string, doc []byte) error {
		if string(doc) != "doc "+key {
			t.Errorf("Docs: %s holds %q", key, doc)
		}
		keys = append(keys, key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"k1", "k2"}, keys); d != "" {
		t.Errorf("Docs keys (-want +got):\n%s", d)
	}

	t.Run("load", func(t *testing.T) {
		inst := otherInstance()
		e.declare(inst)
		if err := e.s.Load(e.ctx, inst, got); err != nil {
			t.Fatalf("Load: %v", err)
		}
		for _, r := range want {
			if d := cmp.Diff(r, e.get(inst, r.Type, r.ID)); d != "" {
				t.Errorf("%s %s loaded (-want +got):\n%s", r.Type, r.ID, d)
			}
		}
		if u := e.usage(inst); u.Records != int64(len(want)) {
			t.Errorf("Usage after Load = %d records, want %d", u.Records, len(want))
		}
		// Indexes serve the loaded records; trashed ones stay trashed.
		if ids := e.findText(inst, "Author", "bestbook = 'b4'"); !slices.Equal(ids, []string{authorID(2)}) {
			t.Errorf("find by an indexed reference after Load = %v", ids)
		}
		if ids := e.findText(inst, "Book", "title = 'Purgatorio'"); len(ids) != 0 {
			t.Errorf("a trashed record is found after Load: %v", ids)
		}
		// A loaded unique value is taken.
		_, err := e.s.Write(e.ctx, inst, []store.Op{upsert("Account", "u2", at(50), map[string]any{"username": "ann"})}, store.Quota{})
		if !errors.Is(err, store.ErrUnique) {
			t.Errorf("a write of a loaded unique value: %v, want ErrUnique", err)
		}
		// Loading a record again fails, naming it.
		err = e.s.Load(e.ctx, inst, got[:1])
		if !errors.Is(err, store.ErrExists) {
			t.Errorf("Load of a record the instance holds: %v, want ErrExists", err)
		}
		if err := e.s.Load(e.ctx, inst, []*store.Record{{Type: "Book"}}); err == nil {
			t.Error("Load of a record without an id succeeded")
		}
	})
}
