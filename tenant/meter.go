package tenant

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corehq/core/errcode"
	"github.com/corehq/core/internal/periodic"
	"github.com/corehq/core/store"
)

// Meter counts what each instance does: its requests through every door,
// its function calls and the time they took. Counts are kept in this
// process's memory, lock-free for requests, and added to the instance's
// counters in the store (store.Store.AddCounters, one call for every
// instance) by Flush: every interval (Run) and when the process stops
// (Close). So processes sharing a store add up, and the counts survive a
// restart; a process that is killed loses what it counted since its last
// flush. Usage answers the store's figures plus what is not flushed yet,
// so this process's counts are exact at once.
//
// The Meter also applies the functionCallsPerDay quota (AdmitCall): calls
// of an instance with that quota are counted per UTC day too, under the
// counter "functionCalls/<YYYY-MM-DD>". A call is admitted when the day's
// count (the store's, read again when older than the interval, plus the
// calls this process made since) is below the quota. One process is
// exact; processes sharing a store may together pass the quota by the
// calls the others made within one interval. Day counters of past days
// are removed when an instance's counters are read. Without the quota no
// day counter is kept, so a quota set during a day counts that day's
// calls from then on.
//
// Safe for concurrent use.
type Meter struct {
	st    store.Store
	every time.Duration
	now   func() time.Time

	meters sync.Map // instance id → *instMeter
	gone   sync.Map // ids of deleted instances: their late counts are dropped
	since  sync.Map // instance id → time.Time: when its counting began

	// flushMu makes a flush and a read of the store's counts exclusive,
	// so that a read never sees a flush half done: each count is either
	// in the store or still pending here.
	flushMu sync.Mutex
}

// Counter names in the store.
const (
	counterRequests       = "requests"
	counterFunctionCalls  = "functionCalls"
	counterFunctionMillis = "functionMillis"
	// dayPrefix + YYYY-MM-DD counts a day's function calls.
	dayPrefix = "functionCalls/"
)

// The counters of an instance's files, which the engine keeps as it
// uploads and deletes them (store.Store.AddCounters): how many, and the
// bytes of their contents, which the storageBytes quota counts.
const (
	CounterFiles     = "files"
	CounterFileBytes = "fileBytes"
)

// docMeterSince is the kind of the documents holding when an instance's
// counting began (CreateDoc: the first process to count wins).
const docMeterSince = "metersince"

// instMeter is one instance's counts not yet added to the store.
type instMeter struct {
	requests, calls, nanos atomic.Int64

	mu sync.Mutex
	// days are the function calls per day not yet flushed (kept only
	// with a functionCallsPerDay quota); prune holds the negative adds
	// that remove past days' counters.
	days  map[string]int64
	prune map[string]int64
	// day is the day of base and local: base is the store's count of it
	// as read at read, local the calls this process counted since.
	day         string
	base, local int64
	read        time.Time
}

// NewMeter returns a meter adding to st's counters every interval (Run).
func NewMeter(st store.Store, every time.Duration) *Meter {
	return &Meter{st: st, every: every, now: time.Now}
}

// SetClock makes the meter read the time from now (tests move the day);
// call it before the meter is used.
func (m *Meter) SetClock(now func() time.Time) { m.now = now }

func (m *Meter) of(id string) *instMeter {
	if v, ok := m.meters.Load(id); ok {
		return v.(*instMeter)
	}
	v, _ := m.meters.LoadOrStore(id, &instMeter{days: map[string]int64{}, prune: map[string]int64{}})
	return v.(*instMeter)
}

// Request counts one request of the instance.
func (m *Meter) Request(id string) { m.of(id).requests.Add(1) }

// AdmitCall counts one function call of inst, or refuses it with
// QUOTA_EXCEEDED when the instance made its functionCallsPerDay calls
// today (UTC). A refused call is not counted. It reads the store (once
// per interval per instance) only for an instance with that quota.
func (m *Meter) AdmitCall(ctx context.Context, inst *Instance) error {
	im := m.of(inst.ID)
	limit := inst.Settings.Quota.FunctionCallsPerDay
	if limit <= 0 {
		im.calls.Add(1)
		return nil
	}
	now := m.now()
	day := now.UTC().Format(time.DateOnly)
	im.mu.Lock()
	fresh := im.day == day && now.Sub(im.read) < m.every
	im.mu.Unlock()
	if !fresh {
		if err := m.readDay(ctx, inst.ID, im, day, now); err != nil {
			return err
		}
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.day != day {
		// The day turned since the read: nothing of the new one is known
		// but what this process counts.
		im.day, im.base, im.local, im.read = day, 0, 0, now
	}
	if im.base+im.local >= limit {
		tomorrow := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		err := errcode.New(errcode.QuotaExceeded,
			"instance %s made its functionCallsPerDay quota of %d function calls today (UTC); calls are allowed again at %s",
			inst.Domain, limit, tomorrow.Format(time.RFC3339))
		err.Extensions = map[string]any{"quota": "functionCallsPerDay", "limit": limit, "resetsAt": tomorrow.Format(time.RFC3339)}
		return err
	}
	im.local++
	im.days[day]++
	im.calls.Add(1)
	return nil
}

// CallDone adds the time a call of the instance took.
func (m *Meter) CallDone(id string, took time.Duration) { m.of(id).nanos.Add(int64(took)) }

// readDay reads the store's count of the instance's calls of day.
func (m *Meter) readDay(ctx context.Context, id string, im *instMeter, day string, now time.Time) error {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	u, err := m.st.Usage(ctx, id)
	if err != nil {
		return errcode.Wrap(errcode.Unavailable, err, "the instance's function calls of the day could not be read; try again")
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	m.notePast(im, u.Counters, day)
	im.day, im.base, im.local, im.read = day, u.Counters[dayPrefix+day], im.days[day], now
	return nil
}

// notePast schedules the removal of the counters of days before today:
// what the store holds (counters, read under flushMu) and what is still
// pending here go to 0 at the next flush. Called with im.mu held.
func (m *Meter) notePast(im *instMeter, counters map[string]int64, today string) {
	past := map[string]int64{}
	for name, n := range counters {
		if d, ok := strings.CutPrefix(name, dayPrefix); ok && d < today {
			past[name] += n
		}
	}
	for d, n := range im.days {
		if d < today {
			past[dayPrefix+d] += n
		}
	}
	for name, n := range past {
		if n != 0 {
			im.prune[name] = -n
		}
	}
}

// Flush adds every instance's pending counts to the store in one call.
// On failure the counts stay pending for the next one.
func (m *Meter) Flush(ctx context.Context) error {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	type taken struct {
		im                     *instMeter
		requests, calls, nanos int64
		days, prune            map[string]int64
	}
	var all []taken
	adds := map[string]map[string]int64{}
	m.meters.Range(func(k, v any) bool {
		id, im := k.(string), v.(*instMeter)
		tk := taken{im: im, requests: im.requests.Swap(0), calls: im.calls.Swap(0), nanos: im.nanos.Swap(0)}
		im.mu.Lock()
		if len(im.days) > 0 {
			tk.days, im.days = im.days, map[string]int64{}
		}
		if len(im.prune) > 0 {
			tk.prune, im.prune = im.prune, map[string]int64{}
		}
		im.mu.Unlock()
		// Whole milliseconds go; the rest waits for more.
		ms := tk.nanos / int64(time.Millisecond)
		if rest := tk.nanos - ms*int64(time.Millisecond); rest != 0 {
			im.nanos.Add(rest)
			tk.nanos -= rest
		}
		add := map[string]int64{}
		for name, n := range map[string]int64{counterRequests: tk.requests, counterFunctionCalls: tk.calls, counterFunctionMillis: ms} {
			if n != 0 {
				add[name] = n
			}
		}
		for day, n := range tk.days {
			add[dayPrefix+day] += n
		}
		for name, n := range tk.prune {
			add[name] += n
		}
		if len(add) == 0 {
			return true
		}
		if _, deleted := m.gone.Load(id); deleted {
			m.meters.Delete(id)
			return true
		}
		adds[id] = add
		all = append(all, tk)
		return true
	})
	if len(adds) == 0 {
		return nil
	}
	if err := m.st.AddCounters(ctx, adds); err != nil {
		// Keep everything for the next flush.
		for _, tk := range all {
			tk.im.requests.Add(tk.requests)
			tk.im.calls.Add(tk.calls)
			tk.im.nanos.Add(tk.nanos)
			tk.im.mu.Lock()
			for day, n := range tk.days {
				tk.im.days[day] += n
			}
			for name, n := range tk.prune {
				if _, again := tk.im.prune[name]; !again {
					tk.im.prune[name] = n
				}
			}
			tk.im.mu.Unlock()
		}
		return fmt.Errorf("tenant: flushing usage counts: %w", err)
	}
	var errs []error
	for id := range adds {
		if _, err := m.sinceOf(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sinceOf is when the instance's counting began: the first process to
// count it writes the time (CreateDoc), every other reads it.
func (m *Meter) sinceOf(ctx context.Context, id string) (time.Time, error) {
	if v, ok := m.since.Load(id); ok {
		return v.(time.Time), nil
	}
	now := m.now().UTC().Truncate(time.Second)
	raw, err := m.st.CreateDoc(ctx, docMeterSince, id, []byte(now.Format(time.RFC3339)))
	if err != nil {
		return time.Time{}, fmt.Errorf("tenant: when counting began: %w", err)
	}
	t, err := time.Parse(time.RFC3339, string(raw))
	if err != nil {
		return time.Time{}, fmt.Errorf("tenant: when counting began: %q: %w", raw, err)
	}
	m.since.Store(id, t)
	return t, nil
}

// Run flushes every interval until ctx ends; failures go to fail. Close
// flushes what is left.
func (m *Meter) Run(ctx context.Context, fail func(error)) {
	periodic.Run(ctx, m.every, m.Flush, fail)
}

// Close flushes what is left: call it when no request runs any more, and
// before the store closes.
func (m *Meter) Close(ctx context.Context) error { return m.Flush(ctx) }

// Usage is what an instance takes up and has done (GET
// /admin/v1/instances/{domain}/usage).
type Usage struct {
	// Records is the store's (store.Usage); StorageBytes the bytes of
	// the records and of the files' contents, which Files and FileBytes
	// count (the counters CounterFiles and CounterFileBytes).
	Records      int64 `json:"records"`
	StorageBytes int64 `json:"storageBytes"`
	Files        int64 `json:"files"`
	FileBytes    int64 `json:"fileBytes"`
	// Requests counts the requests of every door the instance's rate
	// limit let through; FunctionCalls the calls of its functions (from
	// every door, calls back through core.graphql included) and
	// FunctionMillis the time they took, as their callers waited.
	Requests       int64 `json:"requests"`
	FunctionCalls  int64 `json:"functionCalls"`
	FunctionMillis int64 `json:"functionMillis"`
	// Since is when the counting of requests and calls began.
	Since time.Time `json:"since"`
}

// Usage returns the instance's usage: the store's figures plus this
// process's counts not flushed yet.
func (m *Meter) Usage(ctx context.Context, id string) (Usage, error) {
	since, err := m.sinceOf(ctx, id)
	if err != nil {
		return Usage{}, err
	}
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	su, err := m.st.Usage(ctx, id)
	if err != nil {
		return Usage{}, err
	}
	u := Usage{
		Records:        su.Records,
		StorageBytes:   su.StorageBytes + su.Counters[CounterFileBytes],
		Files:          su.Counters[CounterFiles],
		FileBytes:      su.Counters[CounterFileBytes],
		Requests:       su.Counters[counterRequests],
		FunctionCalls:  su.Counters[counterFunctionCalls],
		FunctionMillis: su.Counters[counterFunctionMillis],
		Since:          since,
	}
	if v, ok := m.meters.Load(id); ok {
		im := v.(*instMeter)
		u.Requests += im.requests.Load()
		u.FunctionCalls += im.calls.Load()
		u.FunctionMillis += im.nanos.Load() / int64(time.Millisecond)
		im.mu.Lock()
		m.notePast(im, su.Counters, m.now().UTC().Format(time.DateOnly))
		im.mu.Unlock()
	}
	return u, nil
}

// Forget drops a deleted instance's counts (the store's go with
// DropInstance) and when its counting began (Directory.OnDelete).
func (m *Meter) Forget(ctx context.Context, id string) error {
	m.gone.Store(id, true)
	m.meters.Delete(id)
	m.since.Delete(id)
	return m.st.DeleteDoc(ctx, docMeterSince, id)
}
