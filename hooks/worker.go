package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/arcql"
	"github.com/corehq/core/tenant"
)

// changesPage is how many changes a hook reads at once.
const changesPage = 256

// maxHopResults bounds a reference hop of a hook's filter.
const maxHopResults = 1000

// worker delivers the hooks of one instance, in one goroutine.
type worker struct {
	s    *Service
	id   string
	inst atomic.Pointer[tenant.Instance]
	// until is when the process's lease of the instance runs out (unix
	// nanoseconds); MaxInt64 when the store is not shared.
	until  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
	// gone is set when the instance was deleted: nothing is written.
	gone atomic.Bool

	runs   map[string]*run
	loaded time.Time
	reload bool
	// held is the hold this worker last set on the instance's feed (the
	// zero Hold: none), and heldAt when (hold).
	held   store.Hold
	heldAt time.Time
}

// run is one hook being delivered.
type run struct {
	hook    *Hook
	filters map[string]arcql.Expr // by type; a type absent cannot match
	filter  *arcql.Query
	state   *State
	saved   time.Time
	dirty   bool
}

func (w *worker) main(ctx context.Context) {
	defer close(w.done)
	defer func() {
		if !w.gone.Load() {
			w.saveAll(context.WithoutCancel(ctx), true)
		}
	}()
	for ctx.Err() == nil {
		if w.reload || time.Since(w.loaded) >= w.s.cfg.Scan {
			if err := w.load(ctx); err != nil && ctx.Err() == nil {
				w.s.log.Warn("reading the event hooks failed", zap.String("instance", w.id), zap.Error(err))
			}
		}
		wake := time.Now().Add(w.s.cfg.Scan)
		ready, cursor := false, uint64(math.MaxUint64)
		for _, id := range w.order() {
			r := w.runs[id]
			next := w.progress(ctx, r)
			if next.IsZero() {
				ready, cursor = true, min(cursor, r.state.Cursor)
			} else if next.Before(wake) {
				wake = next
			}
		}
		w.saveAll(ctx, false)
		w.hold(ctx)
		if ctx.Err() != nil || w.reload {
			continue
		}
		wctx, cancel := context.WithDeadline(ctx, wake)
		if ready {
			_, _ = w.s.st.Wait(wctx, w.id, cursor)
		} else {
			<-wctx.Done()
		}
		cancel()
	}
}

// hold keeps the instance's change feed after the cursor of its slowest
// enabled hook (store.HoldChanges) for RetryFor, so that retention trims
// no change a hook has yet to post while it retries, up to
// store.MaxHeld changes; it releases the hold when no hook is enabled.
// It writes the hold when there is none yet, when it moves and holdEvery
// has passed since the last write, and when half of its time has run
// out: a hold left behind is lower than the cursors, which keeps more, and
// one a stopped process left ends by itself.
func (w *worker) hold(ctx context.Context) {
	if w.gone.Load() || ctx.Err() != nil {
		return
	}
	now := time.Now()
	next := store.Hold{After: math.MaxUint64}
	for _, r := range w.runs {
		if r.hook != nil && r.hook.Enabled && !r.state.Disabled {
			next.After, next.Until = min(next.After, r.state.Cursor), now.Add(w.s.cfg.RetryFor+w.s.cfg.Scan)
		}
	}
	held := !w.held.Until.IsZero()
	switch {
	case next.Until.IsZero() && !held:
		return
	case next.Until.IsZero():
		next.After = 0 // released
	case !held, next.After < w.held.After:
	case next.After != w.held.After && now.Sub(w.heldAt) >= holdEvery*w.s.cfg.Scan:
	case w.held.Until.Sub(now) < w.s.cfg.RetryFor/2:
	default:
		return
	}
	if err := w.s.st.HoldChanges(ctx, w.id, next.After, next.Until); err != nil {
		if ctx.Err() == nil {
			w.s.log.Warn("holding the change feed for the event hooks failed", zap.String("instance", w.id), zap.Error(err))
		}
		return
	}
	w.held, w.heldAt = next, now
}

// holdEvery is how many Scans apart a worker moves its hold at most.
const holdEvery = 10

// order is the ids of the hooks, sorted (a stable order of work).
func (w *worker) order() []string {
	ids := make([]string, 0, len(w.runs))
	for id := range w.runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// load reads the instance's hooks again.
func (w *worker) load(ctx context.Context) error {
	w.loaded, w.reload = time.Now(), false
	inst := w.inst.Load()
	recs, err := w.s.st.Find(ctx, w.id, &store.Query{Type: Type, Limit: MaxHooks})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		h, err := FromRecord(rec, func(sealed string) ([]byte, error) { return OpenSecret(w.s.seal, w.id, sealed) })
		if err != nil {
			w.s.log.Warn("an event hook cannot be delivered", zap.String("instance", w.id), zap.Error(err))
			continue
		}
		seen[h.ID] = true
		r := w.runs[h.ID]
		if r == nil {
			st, err := loadState(ctx, w.s.st, w.id, h.ID)
			if err != nil {
				return err
			}
			r = &run{state: st, saved: time.Now()}
			w.runs[h.ID] = r
		}
		if h.Enabled && r.state.Disabled {
			// Enabled again by a client: a fresh start of its retries.
			r.state.Disabled, r.state.Attempt, r.state.FailingSince, r.state.NextAttempt = false, 0, time.Time{}, time.Time{}
			r.dirty = true
		}
		if r.hook == nil || r.hook.ArcQL != h.ArcQL {
			r.filter, r.filters = nil, map[string]arcql.Expr{}
			if h.ArcQL != "" {
				if q, err := arcql.Parse(h.ArcQL, arcql.DefaultLimits()); err == nil {
					r.filter = q
				}
			}
		}
		if r.hook != nil && r.filter != nil && inst != nil {
			clear(r.filters) // the release may have changed: bind again
		}
		r.hook = h
	}
	for id := range w.runs {
		if seen[id] {
			continue
		}
		delete(w.runs, id)
		if _, err := w.s.st.Get(ctx, w.id, Type, id); errors.Is(err, store.ErrNotFound) {
			// Deleted: its state goes with it.
			_ = w.s.st.DeleteDoc(ctx, docState, stateKey(w.id, id))
		}
	}
	return nil
}

// mayPost reports whether the lease leaves time for a post to end.
func (w *worker) mayPost(now time.Time) bool {
	return time.Unix(0, w.until.Load()).Sub(now) > w.s.cfg.Timeout+skewMargin
}

// progress posts the hook's changes until it has none, fails or must
// wait, and returns when to come back: zero when caught up.
func (w *worker) progress(ctx context.Context, r *run) time.Time {
	far := time.Now().Add(w.s.cfg.Scan)
	if !r.hook.Enabled || r.state.Disabled {
		return far
	}
	for ctx.Err() == nil {
		now := time.Now()
		if r.state.NextAttempt.After(now) {
			return r.state.NextAttempt
		}
		if !w.mayPost(now) {
			return far
		}
		changes, err := w.s.st.Changes(ctx, w.id, r.state.Cursor, changesPage)
		if errors.Is(err, store.ErrHistoryGone) {
			err = w.skipGap(ctx, r)
		}
		if err != nil {
			if ctx.Err() == nil {
				w.s.log.Warn("reading the change feed for an event hook failed", zap.String("instance", w.id), zap.Error(err))
			}
			return far
		}
		if len(changes) == 0 {
			return time.Time{}
		}
		items := make([]item, 0, len(changes))
		for i := range changes {
			c := &changes[i]
			if c.Type == Type {
				w.reload = true
			}
			m, err := w.message(ctx, r, c)
			if err != nil {
				if ctx.Err() == nil {
					w.s.log.Warn("reading a record for an event hook failed", zap.String("instance", w.id), zap.Error(err))
				}
				break // post those before it
			}
			items = append(items, item{change: c, msg: m})
		}
		if len(items) == 0 {
			return far
		}
		if !w.mayPost(time.Now()) {
			return far
		}
		w.s.send.sendAll(ctx, items, w.s.cfg.Parallel)
		if ctx.Err() != nil {
			return time.Time{} // stopping: what was not recorded is posted again by whoever goes on
		}
		if !w.record(ctx, r, items) {
			return r.state.NextAttempt
		}
		if time.Since(r.saved) >= w.s.cfg.SaveEvery {
			w.save(ctx, r)
		}
	}
	return time.Time{}
}

// record logs the posts of items and moves the cursor past every change
// up to the first failed post; false when one failed (then the state
// says when to try it again).
func (w *worker) record(ctx context.Context, r *run, items []item) bool {
	st, failed := r.state, false
	for i := range items {
		it := &items[i]
		if it.msg == nil {
			if !failed {
				st.Cursor, r.dirty = it.change.Seq, true
			}
			continue
		}
		if !it.tried {
			continue // after a failed post of its record: tried again with it
		}
		c, o := it.change, it.out
		a := Attempt{At: o.at.UTC(), EventID: it.msg.id, Seq: c.Seq, Type: c.Type, Op: string(c.Op), Record: c.ID,
			Attempt: 1, Status: o.status, Millis: o.millis, Response: o.response}
		if !failed {
			a.Attempt = st.Attempt + 1
		}
		r.dirty = true
		if o.err == nil {
			st.log(a, w.s.cfg.LogSize)
			st.Delivered++
			w.s.stats.delivered.Add(1)
			if !failed {
				st.Cursor, st.Attempt, st.NextAttempt, st.FailingSince = c.Seq, 0, time.Time{}, time.Time{}
			}
			continue
		}
		a.Error = o.err.Error()
		st.log(a, w.s.cfg.LogSize)
		st.Failed++
		w.s.stats.failed.Add(1)
		if failed {
			continue
		}
		failed = true
		now := o.at
		st.Attempt++
		st.LastError = fmt.Sprintf("%s: %s", now.UTC().Format(time.RFC3339), a.Error)
		if st.FailingSince.IsZero() {
			st.FailingSince = now
		}
		if now.Sub(st.FailingSince) >= w.s.cfg.RetryFor {
			st.Disabled = true
			w.disable(ctx, r, fmt.Sprintf("disabled after failing for %s: %s", now.Sub(st.FailingSince).Round(time.Second), a.Error))
		}
		st.NextAttempt = now.Add(w.s.cfg.backoff(st.Attempt))
	}
	if failed {
		w.save(ctx, r)
	}
	return !failed
}

// disable sets the hook's record to enabled: false with its last error.
func (w *worker) disable(ctx context.Context, r *run, why string) {
	w.s.stats.disabled.Add(1)
	if _, err := w.s.st.Get(ctx, w.id, Type, r.hook.ID); err != nil {
		return // deleted meanwhile
	}
	_, err := w.s.st.Write(ctx, w.id, []store.Op{{Kind: store.OpUpsert, Type: Type, ID: r.hook.ID, Now: time.Now().UTC(),
		Set: map[string]any{"enabled": false, "lastError": why}}}, store.Quota{})
	if err != nil && ctx.Err() == nil {
		w.s.log.Warn("disabling an event hook failed", zap.String("instance", w.id), zap.Error(err))
	}
	r.hook.Enabled = false
}

// skipGap moves a hook past changes the feed no longer keeps, to the
// oldest it still has, and logs the gap.
func (w *worker) skipGap(ctx context.Context, r *run) error {
	last, err := w.s.st.LastChange(ctx, w.id)
	if err != nil {
		return err
	}
	// The oldest kept change follows the smallest after that reads
	// without ErrHistoryGone.
	lo, hi := r.state.Cursor, last
	for lo < hi {
		mid := lo + (hi-lo)/2
		_, err := w.s.st.Changes(ctx, w.id, mid, 1)
		switch {
		case errors.Is(err, store.ErrHistoryGone):
			lo = mid + 1
		case err != nil:
			return err
		default:
			hi = mid
		}
	}
	lost := lo - r.state.Cursor
	r.state.log(Attempt{At: time.Now().UTC(), Seq: lo,
		Error: fmt.Sprintf("%d changes after %d were trimmed from the change feed before they could be delivered (the feed keeps an hour and at least the newest 10,000, and holds at most %d changes for a hook that is behind); delivery goes on after them", lost, r.state.Cursor, store.MaxHeld)},
		w.s.cfg.LogSize)
	r.state.LastError = r.state.Log[len(r.state.Log)-1].Error
	r.state.Cursor, r.dirty = lo, true
	w.s.stats.lost.Add(lost)
	w.save(ctx, r)
	return nil
}

// message is the post of a change, or nil when the hook does not take it.
func (w *worker) message(ctx context.Context, r *run, c *store.Change) (*message, error) {
	if !r.hook.wants(c) {
		return nil, nil
	}
	inst := w.inst.Load()
	if inst == nil || inst.Release() == nil {
		return nil, errors.New("the instance has no release")
	}
	model := inst.Release().Model
	t, ok := model.Type(c.Type)
	if !ok {
		return nil, nil // a type the release no longer has
	}
	rec := c.Before
	if c.Op != store.ChangeDeleted {
		got, err := w.s.st.Get(ctx, w.id, c.Type, c.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		rec = got
	}
	if r.filter != nil && r.filter.Filter != nil {
		f, ok := r.filters[c.Type]
		if !ok {
			if q, err := arcql.Bind(r.filter, model, c.Type, w.id); err == nil {
				f = q.Filter
			}
			r.filters[c.Type] = f
		}
		if f == nil || rec == nil {
			return nil, nil // the filter does not apply to the type, or the record is gone
		}
		f, err := store.ResolveHops(ctx, w.s.st, w.id, f, maxHopResults)
		if err != nil {
			return nil, err
		}
		if !arcql.Match(f, rec) {
			return nil, nil
		}
	}
	var n any
	if c.Op != store.ChangeDeleted && rec != nil {
		n = node(t, rec)
	}
	body, err := json.Marshal(struct {
		Type      string `json:"type"`
		Op        string `json:"op"`
		ID        string `json:"id"`
		Node      any    `json:"node"`
		Instance  string `json:"instance"`
		Timestamp string `json:"timestamp"`
	}{c.Type, string(c.Op), c.ID, n, inst.Domain, stamp(c.Time)})
	if err != nil {
		return nil, err
	}
	return &message{url: r.hook.URL, id: eventID(c, r.hook.ID), key: r.hook.Key, body: body}, nil
}

// eventID is the webhook-id of a change's posts to a hook: the same on
// every attempt, and never that of another change, even after a restore
// (whose feed numbers its changes from 1 again: the change's time tells
// them apart).
func eventID(c *store.Change, hookID string) string {
	return fmt.Sprintf("evt_%d_%d_%s", c.Seq, c.Time.UnixMilli(), hookID)
}

func (w *worker) save(ctx context.Context, r *run) {
	if inst := w.inst.Load(); inst != nil {
		if cur, ok := w.s.reg.Lookup(inst.Domain); !ok || cur.ID != w.id {
			return // the instance was deleted: its hooks' states with it
		}
	}
	if err := saveState(ctx, w.s.st, w.id, r.hook.ID, r.state); err != nil {
		if ctx.Err() == nil {
			w.s.log.Warn("writing an event hook's cursor failed", zap.String("instance", w.id), zap.Error(err))
		}
		return
	}
	r.saved, r.dirty = time.Now(), false
}

// saveAll writes the states that changed (all of them when stopping;
// otherwise those not written for SaveEvery).
func (w *worker) saveAll(ctx context.Context, all bool) {
	for _, r := range w.runs {
		if r.dirty && (all || time.Since(r.saved) >= w.s.cfg.SaveEvery) {
			w.save(ctx, r)
		}
	}
}
