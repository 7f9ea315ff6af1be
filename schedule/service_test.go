package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/tenant"
)

// recorder is a Runner that records the ticks it is called at (the
// schedule's nextExecution as the run saw it, which the service moved
// on before the call) and fails when told.
type recorder struct {
	mu    sync.Mutex
	calls []map[string]any
	fail  error
}

func (r *recorder) RunScheduled(_ context.Context, inst *tenant.Instance, s *Schedule) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s.Args)
	return r.fail
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// clock is an injected clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	st   store.Store
	inst *tenant.Instance
	clk  *clock
	run  *recorder
	svc  *Service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{st: bolttest.Open(t), inst: &tenant.Instance{ID: "i1"}, clk: &clock{now: t0}, run: &recorder{}}
	f.svc = f.service()
	if err := Noted(context.Background(), f.st, "i1"); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) service() *Service {
	return New(f.st, func() []*tenant.Instance { return []*tenant.Instance{f.inst} }, f.run,
		Config{Scan: time.Second, Stale: 10 * time.Minute, Now: f.clk.Now}, zap.NewNop())
}

// put writes a schedule as gql does: its fields and the first tick not
// before now as nextExecution.
func (f *fixture) put(t *testing.T, id string, fields map[string]any) {
	t.Helper()
	fields["fn"] = map[string]any{"type": "Mutation", "field": "tick"}
	sch, err := FromFields(id, fields, f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if next := sch.After(f.clk.Now(), true); !next.IsZero() {
		fields["nextExecution"] = FormatTime(next)
	}
	if _, err := f.st.Write(context.Background(), "i1", []store.Op{{Kind: store.OpUpsert, Type: Type, ID: id, Now: f.clk.Now(), Set: fields}}, store.Quota{}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) get(t *testing.T, id string) map[string]any {
	t.Helper()
	r, err := f.st.Get(context.Background(), "i1", Type, id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Fields
}

// at sets the clock and runs one scan.
func (f *fixture) at(t *testing.T, d time.Duration) {
	t.Helper()
	f.clk.set(t0.Add(d))
	if err := f.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTicks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, "s1", map[string]any{"interval": "MINUTE", "start": FormatTime(t0), "id": "rec1", "arcql": "*", "type": "Note"})
	f.at(t, 0)
	if n := f.run.count(); n != 1 {
		t.Fatalf("runs at the start: %d, want 1", n)
	}
	if got := f.run.calls[0]; got["id"] != "rec1" || got["arcql"] != "*" || got["type"] != "Note" {
		t.Errorf("arguments: %v", got)
	}
	rec := f.get(t, "s1")
	if rec["nextExecution"] != FormatTime(t0.Add(time.Minute)) || rec["lastExecuted"] != FormatTime(t0) ||
		rec["lastExecutionSucceeded"] != true || rec["lastExecutionError"] != nil {
		t.Errorf("after the first run: %v", rec)
	}
	f.at(t, 30*time.Second)
	f.at(t, 59*time.Second)
	if n := f.run.count(); n != 1 {
		t.Fatalf("runs before the second tick: %d, want 1", n)
	}
	f.at(t, time.Minute)
	f.at(t, time.Minute+10*time.Second)
	if n := f.run.count(); n != 2 {
		t.Fatalf("runs after the second tick: %d, want 2", n)
	}
}

// After downtime a missed tick runs once, and the schedule goes on from
// the first tick after that run.
func TestMissedTicksRunOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, "s1", map[string]any{"interval": "MINUTE", "intervalFrequency": 2, "start": FormatTime(t0)})
	f.at(t, 0)
	f.at(t, 61*time.Minute+5*time.Second) // thirty ticks missed
	f.at(t, 61*time.Minute+6*time.Second)
	if n := f.run.count(); n != 2 {
		t.Fatalf("runs: %d, want 2 (the first, then one for the missed ones)", n)
	}
	rec := f.get(t, "s1")
	if rec["nextExecution"] != FormatTime(t0.Add(62*time.Minute)) || rec["lastExecuted"] != FormatTime(t0.Add(61*time.Minute+5*time.Second)) {
		t.Errorf("after the missed ticks: %v", rec)
	}
	f.at(t, 62*time.Minute)
	if n := f.run.count(); n != 3 {
		t.Fatalf("runs at the next tick: %d, want 3", n)
	}
}

func TestEndAndRepeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, "ends", map[string]any{"interval": "MINUTE", "start": FormatTime(t0), "end": FormatTime(t0.Add(2 * time.Minute))})
	f.put(t, "once", map[string]any{"interval": "MINUTE", "start": FormatTime(t0.Add(time.Minute)), "repeats": false})
	for m := range 6 {
		f.at(t, time.Duration(m)*time.Minute)
	}
	if n := f.run.count(); n != 4 {
		t.Fatalf("runs: %d, want 3 of the ending schedule and 1 of the one-off", n)
	}
	for _, id := range []string{"ends", "once"} {
		if rec := f.get(t, id); rec["nextExecution"] != nil {
			t.Errorf("%s: nextExecution %v once over", id, rec["nextExecution"])
		}
	}
	if rec := f.get(t, "once"); rec["lastExecuted"] != FormatTime(t0.Add(time.Minute)) {
		t.Errorf("once ran at %v", rec["lastExecuted"])
	}
}

func TestFailureRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run.fail = errors.New("FUNCTION_ERROR: boom")
	f.put(t, "s1", map[string]any{"interval": "HOUR", "start": FormatTime(t0)})
	f.at(t, 0)
	rec := f.get(t, "s1")
	if rec["lastExecutionSucceeded"] != false || rec["lastExecutionError"] != "FUNCTION_ERROR: boom" ||
		rec["nextExecution"] != FormatTime(t0.Add(time.Hour)) {
		t.Errorf("after a failed run: %v", rec)
	}
	if runs, failed := f.svc.Stats(); runs != 1 || failed != 1 {
		t.Errorf("stats: %d runs, %d failed", runs, failed)
	}
}

// Processes sharing a store run each tick once between them; a claim
// left by a process that died is not run, and the schedule moves on.
func TestOneClaimPerTick(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	others := []*Service{f.svc, f.service(), f.service()}
	f.put(t, "s1", map[string]any{"interval": "MINUTE", "start": FormatTime(t0)})
	for m := range 3 {
		f.clk.set(t0.Add(time.Duration(m) * time.Minute))
		var wg sync.WaitGroup
		for _, s := range others {
			wg.Add(1)
			go func() { defer wg.Done(); _ = s.Tick(context.Background()) }()
		}
		wg.Wait()
	}
	if n := f.run.count(); n != 3 {
		t.Fatalf("runs of three ticks by three services: %d, want 3", n)
	}

	// A process claimed the tick at 3m and died before moving it on.
	dead, _ := json.Marshal(claim{Owner: "dead", At: t0.Add(3 * time.Minute)})
	if _, err := f.st.CreateDoc(context.Background(), docTick, tickKey("i1", "s1", t0.Add(3*time.Minute)), dead); err != nil {
		t.Fatal(err)
	}
	f.at(t, 3*time.Minute+time.Second)
	if n := f.run.count(); n != 3 {
		t.Fatalf("a claimed tick ran again: %d runs", n)
	}
	f.at(t, 14*time.Minute) // the claim is stale: moved on, not run
	if rec := f.get(t, "s1"); rec["nextExecution"] != FormatTime(t0.Add(15*time.Minute)) {
		t.Fatalf("nextExecution after a dead claim: %v", rec["nextExecution"])
	}
	f.at(t, 15*time.Minute)
	if n := f.run.count(); n != 4 {
		t.Fatalf("runs after the dead claim: %d, want 4", n)
	}
}

func TestGrid(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 31, 9, 30, 0, 0, time.UTC)
	cases := []struct {
		interval string
		freq     int
		after    time.Time
		want     time.Time
	}{
		{"MINUTE", 5, start.Add(7 * time.Minute), start.Add(10 * time.Minute)},
		{"HOUR", 1, start.Add(90 * time.Minute), start.Add(2 * time.Hour)},
		{"DAY", 1, start.AddDate(0, 0, 400), start.AddDate(0, 0, 401)},
		{"WEEK", 2, start.AddDate(0, 0, 15), start.AddDate(0, 0, 28)},
		{"MONTH", 1, start.AddDate(3, 0, 0), start.AddDate(3, 1, 0)},
		{"YEAR", 1, start.AddDate(0, 2, 0), start.AddDate(1, 0, 0)},
		{"MONTH_END", 1, start, time.Date(2026, 2, 28, 9, 30, 0, 0, time.UTC)},
		{"MONTH_END", 1, time.Date(2028, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 2, 29, 9, 30, 0, 0, time.UTC)},
		{"YEAR_END", 1, start, time.Date(2026, 12, 31, 9, 30, 0, 0, time.UTC)},
		{"YEAR_END", 2, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 12, 31, 9, 30, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		s := &Schedule{Start: start, Repeats: true, Interval: c.interval, Frequency: c.freq}
		if got := s.After(c.after, false); !got.Equal(c.want) {
			t.Errorf("%s×%d after %v: %v, want %v", c.interval, c.freq, c.after, got, c.want)
		}
	}
	if _, err := FromFields("x", map[string]any{"fn": map[string]any{"type": "Query", "field": "f"}, "intervalFrequency": 0}, start); err == nil {
		t.Error("intervalFrequency 0 was accepted")
	}
}
