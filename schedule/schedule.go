package schedule

import (
	"fmt"
	"slices"
	"time"

	"github.com/corehq/core/store"
)

// Type is the built-in record type of scheduled functions.
const Type = "ScheduledFunction"

// MaxSchedules is how many ScheduledFunction records an instance may have.
const MaxSchedules = 100

// Intervals are the values of ScheduledFunction.interval.
var Intervals = []string{"MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR", "MONTH_END", "YEAR_END"}

// ServiceFields are the fields of a ScheduledFunction only the service
// writes.
var ServiceFields = []string{"lastExecuted", "nextExecution", "lastExecutionSucceeded", "lastExecutionError"}

// Layout is how the service writes the times of a record (as DateTime).
const Layout = "2006-01-02T15:04:05.000Z"

// Schedule is a ScheduledFunction record as the service runs it.
type Schedule struct {
	ID         string
	OpType     string // Query or Mutation
	Field      string
	Start, End time.Time // End zero: none
	Repeats    bool
	Interval   string
	Frequency  int
	Next       time.Time // zero: none (over, or not computed)
	// Args are id, arcql and type, as the record has them.
	Args map[string]any
}

// ParseTime reads a DateTime value.
func ParseTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("expected an ISO-8601 timestamp, not %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO-8601 timestamp such as 2026-01-02T15:04:05Z", s)
	}
	return t.UTC(), nil
}

// FormatTime writes a time as the service keeps it.
func FormatTime(t time.Time) string { return t.UTC().Format(Layout) }

// FromFields reads the fields of a ScheduledFunction record; created is
// when it was written first (start when it has none).
func FromFields(id string, f map[string]any, created time.Time) (*Schedule, error) {
	s := &Schedule{ID: id, Repeats: true, Interval: "DAY", Frequency: 1, Start: created.UTC(), Args: map[string]any{}}
	ref, _ := f["fn"].(map[string]any)
	s.OpType, _ = ref["type"].(string)
	s.Field, _ = ref["field"].(string)
	if s.Field == "" {
		return nil, fmt.Errorf("fn: names no field")
	}
	var err error
	if v, ok := f["start"]; ok && v != nil {
		if s.Start, err = ParseTime(v); err != nil {
			return nil, fmt.Errorf("start: %v", err)
		}
	}
	if v, ok := f["end"]; ok && v != nil {
		if s.End, err = ParseTime(v); err != nil {
			return nil, fmt.Errorf("end: %v", err)
		}
	}
	if b, ok := f["repeats"].(bool); ok {
		s.Repeats = b
	}
	if v, ok := f["interval"].(string); ok {
		if !slices.Contains(Intervals, v) {
			return nil, fmt.Errorf("interval: %q is not one of %v", v, Intervals)
		}
		s.Interval = v
	}
	if v, ok := f["intervalFrequency"]; ok && v != nil {
		n, ok := toInt(v)
		if !ok || n < 1 {
			return nil, fmt.Errorf("intervalFrequency: %v is below 1: the shortest interval is one minute (interval MINUTE, intervalFrequency 1)", v)
		}
		if n > 1_000_000 {
			return nil, fmt.Errorf("intervalFrequency: %v is above 1000000", v)
		}
		s.Frequency = n
	}
	if v, ok := f["nextExecution"]; ok && v != nil {
		if s.Next, err = ParseTime(v); err != nil {
			return nil, fmt.Errorf("nextExecution: %v", err)
		}
	}
	for _, name := range []string{"id", "arcql", "type"} {
		if v, ok := f[name]; ok && v != nil {
			s.Args[name] = v
		}
	}
	return s, nil
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case int32:
		return int(n), true
	case float64:
		if n == float64(int64(n)) && n > -1e15 && n < 1e15 {
			return int(n), true
		}
	}
	return 0, false
}

// FromRecord reads a ScheduledFunction record.
func FromRecord(r *store.Record) (*Schedule, error) {
	return FromFields(r.ID, r.Fields, r.Created)
}

// tick returns the k-th tick of the schedule's grid (k ≥ 0).
func (s *Schedule) tick(k int) time.Time {
	n := k * s.Frequency
	st := s.Start
	switch s.Interval {
	case "MINUTE":
		return st.Add(time.Duration(n) * time.Minute)
	case "HOUR":
		return st.Add(time.Duration(n) * time.Hour)
	case "DAY":
		return st.AddDate(0, 0, n)
	case "WEEK":
		return st.AddDate(0, 0, 7*n)
	case "MONTH":
		return st.AddDate(0, n, 0)
	case "YEAR":
		return st.AddDate(n, 0, 0)
	case "MONTH_END":
		first := time.Date(st.Year(), st.Month(), 1, st.Hour(), st.Minute(), st.Second(), st.Nanosecond(), time.UTC)
		return first.AddDate(0, n+1, -1)
	case "YEAR_END":
		return time.Date(st.Year()+n, time.December, 31, st.Hour(), st.Minute(), st.Second(), st.Nanosecond(), time.UTC)
	}
	return st
}

// After returns the first tick of the schedule later than t (not before
// when inclusive), or zero when there is none (the schedule is over: it
// does not repeat and its one tick is not after t, or the tick is past
// End).
func (s *Schedule) After(t time.Time, inclusive bool) time.Time {
	later := func(x time.Time) bool { return x.After(t) || (inclusive && x.Equal(t)) }
	first := s.tick(0)
	if !s.Repeats {
		if later(first) && s.within(first) {
			return first
		}
		return time.Time{}
	}
	// Jump near t with an upper bound on the step (times are UTC: days
	// are 24 hours; months at most 31 days), then walk.
	k := 0
	if t.After(first) {
		step := map[string]time.Duration{"MINUTE": time.Minute, "HOUR": time.Hour, "DAY": 24 * time.Hour, "WEEK": 168 * time.Hour,
			"MONTH": 31 * 24 * time.Hour, "MONTH_END": 31 * 24 * time.Hour, "YEAR": 366 * 24 * time.Hour, "YEAR_END": 366 * 24 * time.Hour}[s.Interval]
		k = max(int(t.Sub(first)/(step*time.Duration(s.Frequency)))-2, 0)
		for k > 0 && later(s.tick(k)) {
			k /= 2
		}
	}
	for ; ; k++ {
		x := s.tick(k)
		if !s.within(x) {
			return time.Time{}
		}
		if later(x) {
			return x
		}
	}
}

func (s *Schedule) within(x time.Time) bool { return s.End.IsZero() || !x.After(s.End) }
