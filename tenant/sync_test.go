package tenant_test

import (
	"context"
	"slices"
	"testing"

	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// TestRefreshFollowsAnotherDirectory: two directories over one store stand
// for two cored processes sharing a database. What one changes, the other
// serves after Refresh, compiling only what is new.
func TestRefreshFollowsAnotherDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	if err := h.reg.Load(ctx); err != nil {
		t.Fatal(err)
	}
	h.putRelease("v1", bookstoreSDL)
	other := h.loaded()
	refresh := func(want bool) {
		t.Helper()
		changed, err := other.Refresh(ctx)
		if err != nil {
			t.Fatalf("Refresh: %v", err)
		}
		if changed != want {
			t.Fatalf("Refresh reloaded = %v, want %v", changed, want)
		}
	}
	refresh(false)

	inst, _ := h.create("books.test", "v1")
	refresh(true)
	got, ok := other.Lookup("books.test")
	if !ok || got.ID != inst.ID || got.Release().Name != "v1" {
		t.Fatalf("other directory: %v %v", got, ok)
	}

	h.putRelease("v2", bookstoreV2SDL)
	v2 := "v2"
	if _, err := h.reg.UpdateInstance(ctx, "books.test", tenant.Change{Release: &v2}); err != nil {
		t.Fatal(err)
	}
	refresh(true)
	again, _ := other.Lookup("books.test")
	if again != got {
		t.Error("a release swap replaced the instance value instead of swapping its release")
	}
	if again.Release().Name != "v2" {
		t.Errorf("other directory serves %s, want v2", again.Release().Name)
	}
	if !slices.ContainsFunc(h.st.lastDeclared(inst.ID), func(s store.TypeSpec) bool { return s.Name == "Shelf" }) {
		t.Errorf("v2's types were not declared: %+v", h.st.lastDeclared(inst.ID))
	}
	refresh(false)

	if _, err := h.reg.UpdateInstance(ctx, "books.test", tenant.Change{Settings: []byte(`{"anonymousRequests": true}`)}); err != nil {
		t.Fatal(err)
	}
	refresh(true)
	if s, _ := other.Lookup("books.test"); !s.Settings.AnonymousRequests || s.Release().Name != "v2" {
		t.Errorf("settings not followed: %+v", s.Settings)
	}

	if _, err := h.reg.DeleteInstance(ctx, "books.test"); err != nil {
		t.Fatal(err)
	}
	refresh(true)
	if _, ok := other.Lookup("books.test"); ok {
		t.Error("a deleted instance still serves in the other directory")
	}
	if changed, err := h.reg.Refresh(ctx); err != nil || changed {
		t.Errorf("a directory's own changes made it reload: %v, %v", changed, err)
	}
}
