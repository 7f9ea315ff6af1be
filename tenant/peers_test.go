package tenant

import (
	"testing"
	"time"

	"github.com/corehq/core/store/bolt/bolttest"
)

// TestPeers: processes on one store count each other; one that stops
// beating drops out after three intervals and its heartbeat is removed
// after ten.
func TestPeers(t *testing.T) {
	t.Parallel()
	st := bolttest.Open(t)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, b := NewPeers(st, time.Second), NewPeers(st, time.Second)
	a.now, b.now = clock, clock
	if a.Count() != 1 {
		t.Fatalf("before a beat: %d, want 1", a.Count())
	}
	for _, p := range []*Peers{a, b, a} {
		if err := p.Beat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if a.Count() != 2 || b.Count() != 2 {
		t.Errorf("counts %d and %d, want 2 each", a.Count(), b.Count())
	}
	now = now.Add(4 * time.Second) // b stops
	if err := a.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Count() != 1 {
		t.Errorf("after b stopped: %d, want 1", a.Count())
	}
	now = now.Add(10 * time.Second)
	if err := a.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	docs, err := st.ListDocs(ctx, docPeer)
	if err != nil || len(docs) != 1 {
		t.Errorf("heartbeats left: %d %v, want a's only", len(docs), err)
	}
}
