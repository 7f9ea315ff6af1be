package tenant

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
)

// flakyCounters fails AddCounters while down, over a real store.
type flakyCounters struct {
	store.Store
	down bool
}

func (s *flakyCounters) AddCounters(ctx context.Context, adds map[string]map[string]int64) error {
	if s.down {
		return errors.New("the disk is full")
	}
	return s.Store.AddCounters(ctx, adds)
}

// TestMeterProcesses: two meters on one store, as two processes: their
// counts add up in the store, each answers its own unflushed counts at
// once, and a failed flush keeps the counts for the next.
func TestMeterProcesses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := &flakyCounters{Store: bolttest.Open(t)}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a, b := NewMeter(st, time.Second), NewMeter(st, time.Second)
	a.now, b.now = func() time.Time { return now }, func() time.Time { return now }
	inst := &Instance{ID: "i1", Domain: "one.test"}
	a.Request("i1")
	a.Request("i1")
	b.Request("i1")
	for _, m := range []*Meter{a, b} {
		if err := m.AdmitCall(ctx, inst); err != nil {
			t.Fatal(err)
		}
	}
	a.CallDone("i1", 1500*time.Microsecond)
	b.CallDone("i1", 1500*time.Microsecond)
	usage := func(m *Meter) Usage {
		t.Helper()
		u, err := m.Usage(ctx, "i1")
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if u := usage(a); u.Requests != 2 || u.FunctionCalls != 1 || u.FunctionMillis != 1 {
		t.Errorf("a before any flush: %+v, want its own 2 requests, 1 call, 1 ms", u)
	}
	st.down = true
	if err := a.Flush(ctx); err == nil {
		t.Fatal("a flush to a failing store succeeded")
	}
	st.down = false
	for _, m := range []*Meter{a, b} {
		if err := m.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Whole milliseconds are flushed; each meter keeps its half for later.
	want := Usage{Requests: 3, FunctionCalls: 2, FunctionMillis: 2, Since: now}
	if u := usage(a); u != want {
		t.Errorf("after both flushed: %+v, want %+v", u, want)
	}
	if u := usage(b); u != want {
		t.Errorf("b after both flushed: %+v, want %+v", u, want)
	}
}

// TestMeterDailyQuota: the functionCallsPerDay quota across two meters
// on one store, as two processes: each sees the other's calls once they
// are flushed and its read of the day's count is older than the
// interval, which is the bound docs/limits-and-quotas.md gives for overshooting.
func TestMeterDailyQuota(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := bolttest.Open(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, b := NewMeter(st, time.Second), NewMeter(st, time.Second)
	a.now, b.now = clock, clock
	inst := &Instance{ID: "i1", Domain: "one.test", Settings: Settings{Quota: Quota{FunctionCallsPerDay: 3}}}
	admit := func(m *Meter) error {
		t.Helper()
		err := m.AdmitCall(ctx, inst)
		if err != nil && errcode.As(err).Code != errcode.QuotaExceeded {
			t.Fatalf("AdmitCall: %v", err)
		}
		return err
	}
	for range 2 {
		if err := admit(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// b reads the day's 2 and admits the third; a still counts 2 of its
	// own, read less than an interval ago, and admits one more: the
	// overshoot processes may make within an interval.
	if err := admit(b); err != nil {
		t.Fatalf("b's first call: %v", err)
	}
	if err := admit(b); err == nil {
		t.Error("b's second call, the fourth of the day, was admitted")
	}
	if err := admit(a); err != nil {
		t.Errorf("a's third call within the interval: %v", err)
	}
	for _, m := range []*Meter{a, b} {
		if err := m.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Second)
	if err := admit(a); err == nil {
		t.Error("a's call after reading the day's 4 was admitted")
	}
	// The next day.
	now = now.Add(12 * time.Hour)
	if err := admit(b); err != nil {
		t.Errorf("a call of the next day: %v", err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := st.Usage(ctx, "i1")
	if err != nil {
		t.Fatal(err)
	}
	if _, past := u.Counters["functionCalls/2026-01-01"]; past || u.Counters["functionCalls/2026-01-02"] != 1 || u.Counters["functionCalls"] != 5 {
		t.Errorf("counters %v: want the past day removed, 1 call today, 5 in all", u.Counters)
	}
}
