package hooks

import (
	"context"
	"testing"
	"time"

	"github.com/corehq/core/store/bolt/bolttest"
)

// One holder at a time: another process takes the lease only once it
// has run out (and the clock margin with it), and the old holder then
// cannot renew it.
func TestLeaseTakeover(t *testing.T) {
	t.Parallel()
	st := bolttest.Open(t)
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	take := func(owner string, at time.Time) time.Time {
		t.Helper()
		leases, stale, err := readLeases(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range stale {
			_ = st.DeleteDoc(ctx, docLease, k)
		}
		cur, ok := leases["i1"]
		until, err := claim(ctx, st, "i1", owner, cur, ok, at, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return until
	}
	if got := take("a", now); !got.Equal(now.Add(30 * time.Second)) {
		t.Fatalf("a's first claim holds until %v", got)
	}
	if got := take("b", now.Add(10*time.Second)); !got.IsZero() {
		t.Errorf("b took a live lease (until %v)", got)
	}
	if got := take("a", now.Add(20*time.Second)); !got.Equal(now.Add(50 * time.Second)) {
		t.Errorf("a's renewal holds until %v", got)
	}
	if got := take("b", now.Add(51*time.Second)); !got.IsZero() {
		t.Errorf("b took the lease within the clock margin (until %v)", got)
	}
	if got := take("b", now.Add(53*time.Second)); got.IsZero() {
		t.Errorf("b did not take the run-out lease")
	}
	if got := take("a", now.Add(54*time.Second)); !got.IsZero() {
		t.Errorf("a renewed a lease b took over (until %v)", got)
	}
	if err := release(ctx, st, "i1", "b"); err != nil {
		t.Fatal(err)
	}
	if got := take("a", time.Now()); got.IsZero() {
		t.Errorf("a did not take a released lease")
	}
}
