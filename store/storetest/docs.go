package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/store"
)

func testDocs(t *testing.T, e *env) {
	kind, other := "apps-"+store.NewID(), "releases-"+store.NewID()
	put := func(kind, key, doc string) {
		t.Helper()
		if err := e.s.PutDoc(e.ctx, kind, key, []byte(doc)); err != nil {
			t.Fatalf("PutDoc(%s, %s): %v", kind, key, err)
		}
	}
	list := func(kind string) map[string]string {
		t.Helper()
		docs, err := e.s.ListDocs(e.ctx, kind)
		if err != nil {
			t.Fatalf("ListDocs(%s): %v", kind, err)
		}
		out := map[string]string{}
		for k, v := range docs {
			out[k] = string(v)
		}
		return out
	}
	t.Run("missing", func(t *testing.T) {
		if d, err := e.s.GetDoc(e.ctx, kind, "k1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetDoc of a missing document = %q, %v; want ErrNotFound", d, err)
		}
		if got := list(kind); len(got) != 0 {
			t.Errorf("ListDocs of an empty kind = %v", got)
		}
		if err := e.s.DeleteDoc(e.ctx, kind, "k1"); err != nil {
			t.Errorf("DeleteDoc of a missing document: %v", err)
		}
	})
	t.Run("put get list", func(t *testing.T) {
		put(kind, "k1", `{"v":1}`)
		put(kind, "k2", `{"v":2}`)
		put(other, "k1", `other`)
		got, err := e.s.GetDoc(e.ctx, kind, "k1")
		if err != nil || string(got) != `{"v":1}` {
			t.Errorf("GetDoc = %q, %v", got, err)
		}
		if d := cmp.Diff(map[string]string{"k1": `{"v":1}`, "k2": `{"v":2}`}, list(kind)); d != "" {
			t.Errorf("ListDocs (-want +got):\n%s", d)
		}
		if d := cmp.Diff(map[string]string{"k1": "other"}, list(other)); d != "" {
			t.Errorf("ListDocs of the other kind (-want +got):\n%s", d)
		}
	})
	t.Run("replace", func(t *testing.T) {
		put(kind, "k1", `{"v":3}`)
		if got, err := e.s.GetDoc(e.ctx, kind, "k1"); err != nil || string(got) != `{"v":3}` {
			t.Errorf("GetDoc after replace = %q, %v", got, err)
		}
	})
	t.Run("input and output are copies", func(t *testing.T) {
		doc := []byte("original")
		if err := e.s.PutDoc(e.ctx, kind, "k3", doc); err != nil {
			t.Fatal(err)
		}
		copy(doc, "CHANGED!")
		got, err := e.s.GetDoc(e.ctx, kind, "k3")
		if err != nil || string(got) != "original" {
			t.Fatalf("GetDoc = %q, %v", got, err)
		}
		copy(got, "CHANGED!")
		if again, _ := e.s.GetDoc(e.ctx, kind, "k3"); string(again) != "original" {
			t.Errorf("changing a returned document changed the store: %q", again)
		}
	})
	t.Run("empty document", func(t *testing.T) {
		put(kind, "empty", "")
		got, err := e.s.GetDoc(e.ctx, kind, "empty")
		if err != nil || len(got) != 0 {
			t.Errorf("GetDoc of an empty document = %q, %v", got, err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		if err := e.s.DeleteDoc(e.ctx, kind, "k1"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.GetDoc(e.ctx, kind, "k1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetDoc after delete = %v, want ErrNotFound", err)
		}
		if _, err := e.s.GetDoc(e.ctx, other, "k1"); err != nil {
			t.Errorf("delete in one kind removed the other's: %v", err)
		}
	})
	t.Run("not part of instances", func(t *testing.T) {
		if err := e.s.DropInstance(e.ctx, e.inst); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.GetDoc(e.ctx, kind, "k2"); err != nil {
			t.Errorf("DropInstance removed a document: %v", err)
		}
	})
}

// testCreateDoc: the first document created under a key stays, and
// everyone who creates it at once is answered with that one.
func testCreateDoc(t *testing.T, e *env) {
	kind := "service-" + store.NewID()
	got, err := e.s.CreateDoc(e.ctx, kind, "secret", []byte("first"))
	if err != nil || string(got) != "first" {
		t.Fatalf("CreateDoc of a new key = %q, %v; want first", got, err)
	}
	got, err = e.s.CreateDoc(e.ctx, kind, "secret", []byte("second"))
	if err != nil || string(got) != "first" {
		t.Fatalf("CreateDoc of a taken key = %q, %v; want the first document", got, err)
	}
	if raw, err := e.s.GetDoc(e.ctx, kind, "secret"); err != nil || string(raw) != "first" {
		t.Fatalf("GetDoc after both = %q, %v", raw, err)
	}
	var wg sync.WaitGroup
	answers := make([]string, 8)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, err := e.s.CreateDoc(e.ctx, kind, "race", []byte(fmt.Sprintf("writer %d", i)))
			if err != nil {
				t.Errorf("CreateDoc by writer %d: %v", i, err)
			}
			answers[i] = string(raw)
		}()
	}
	wg.Wait()
	stored, _ := e.s.GetDoc(e.ctx, kind, "race")
	for i, a := range answers {
		if a != string(stored) {
			t.Errorf("writer %d was answered %q, but %q is stored", i, a, stored)
		}
	}
}
