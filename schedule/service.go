package schedule

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// The documents of the scheduler: which instances have schedules
// (docScheduled, keyed by instance id: the service reads those only),
// and the claims of ticks (docTick, keyed "<instance>/<schedule>/<tick
// in unix nanoseconds, 20 digits>").
const (
	docScheduled = "scheduled"
	docTick      = "scheduletick"
)

// Runner calls the field a schedule names (gql.Engine.RunScheduled).
type Runner interface {
	RunScheduled(ctx context.Context, inst *tenant.Instance, s *Schedule) error
}

// Config tunes a Service.
type Config struct {
	// Scan is how often the service looks for due ticks.
	Scan time.Duration
	// Stale is how old a claim is when its process is taken for dead
	// (the tick is not run; the schedule moves on), and claims are
	// removed after three times as long. It must be longer than a
	// function may run.
	Stale time.Duration
	// Parallel bounds the runs under way in the process.
	Parallel int
	// Now is the clock (time.Now when nil): tests inject one.
	Now func() time.Time
}

// DefaultConfig is the configuration cored serves with.
func DefaultConfig() Config {
	return Config{Scan: 5 * time.Second, Stale: 10 * time.Minute, Parallel: 4}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Scan <= 0 {
		c.Scan = d.Scan
	}
	if c.Stale <= 0 {
		c.Stale = d.Stale
	}
	if c.Parallel <= 0 {
		c.Parallel = d.Parallel
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Service runs the due ticks of every instance's schedules.
type Service struct {
	st        store.Store
	instances func() []*tenant.Instance
	run       Runner
	cfg       Config
	log       *zap.Logger
	owner     string
	sem       chan struct{}
	wg        sync.WaitGroup
	running   sync.Map // "<instance>/<schedule>" of the runs under way here
	cleaned   time.Time

	runs, failed atomic.Uint64
}

// New returns the service over the store and the instances (a
// tenant.Directory's Instances).
func New(st store.Store, instances func() []*tenant.Instance, run Runner, cfg Config, log *zap.Logger) *Service {
	cfg = cfg.withDefaults()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Service{st: st, instances: instances, run: run, cfg: cfg, log: log, owner: hex.EncodeToString(b[:]),
		sem: make(chan struct{}, cfg.Parallel)}
}

// Stats returns the runs this process made since it started, and how
// many of them failed.
func (s *Service) Stats() (runs, failed uint64) { return s.runs.Load(), s.failed.Load() }

// Run runs the due ticks until ctx ends, then waits for the runs under way.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Scan)
	defer t.Stop()
	defer s.wg.Wait()
	for {
		if err := s.scan(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("looking for due scheduled functions failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick looks for due ticks once and waits for the runs it started (for
// tests, with an injected clock).
func (s *Service) Tick(ctx context.Context) error {
	err := s.scan(ctx)
	s.wg.Wait()
	return err
}

// Noted records that an instance has schedules: the service reads its
// schedules from now on. gql calls it after writing ScheduledFunction
// records.
func Noted(ctx context.Context, st store.Store, instanceID string) error {
	_, err := st.CreateDoc(ctx, docScheduled, instanceID, []byte("{}"))
	return err
}

// Forget removes what the service keeps of a deleted instance.
func Forget(ctx context.Context, st store.Store, instanceID string) error {
	claims, err := st.ListDocs(ctx, docTick)
	if err != nil {
		return err
	}
	for key := range claims {
		if strings.HasPrefix(key, instanceID+"/") {
			if err := st.DeleteDoc(ctx, docTick, key); err != nil {
				return err
			}
		}
	}
	return st.DeleteDoc(ctx, docScheduled, instanceID)
}

// claim is a claim document.
type claim struct {
	Owner string    `json:"owner"`
	At    time.Time `json:"at"`
}

func tickKey(instanceID, scheduleID string, tick time.Time) string {
	return fmt.Sprintf("%s/%s/%020d", instanceID, scheduleID, tick.UnixNano())
}

// scan starts a run for each due tick it claims.
func (s *Service) scan(ctx context.Context) error {
	marked, err := s.st.ListDocs(ctx, docScheduled)
	if err != nil {
		return err
	}
	now := s.cfg.Now().UTC()
	for _, inst := range s.instances() {
		if _, ok := marked[inst.ID]; !ok {
			continue
		}
		recs, err := s.st.Find(ctx, inst.ID, &store.Query{Type: Type, Limit: MaxSchedules})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.log.Warn("reading scheduled functions failed", zap.String("instance", inst.ID), zap.Error(err))
			continue
		}
		for _, rec := range recs {
			if rec.Trashed != nil {
				continue
			}
			sch, err := FromRecord(rec)
			if err != nil || sch.Next.IsZero() || sch.Next.After(now) {
				continue
			}
			if _, busy := s.running.Load(inst.ID + "/" + sch.ID); busy {
				continue
			}
			s.due(ctx, inst, sch, now)
		}
	}
	if now.Sub(s.cleaned) >= s.cfg.Stale {
		s.cleaned = now
		s.clean(ctx, now)
	}
	return ctx.Err()
}

// due claims the tick sch.Next and runs it, or, when another process
// claimed it and died, moves the schedule on.
func (s *Service) due(ctx context.Context, inst *tenant.Instance, sch *Schedule, now time.Time) {
	mine, _ := json.Marshal(claim{Owner: s.owner, At: now})
	got, err := s.st.CreateDoc(ctx, docTick, tickKey(inst.ID, sch.ID, sch.Next), mine)
	if err != nil {
		s.log.Warn("claiming a scheduled tick failed", zap.String("instance", inst.ID), zap.Error(err))
		return
	}
	var c claim
	_ = json.Unmarshal(got, &c)
	if c.Owner != s.owner || !c.At.Equal(now) {
		if now.Sub(c.At) > s.cfg.Stale {
			// Claimed by a process that died before moving it on.
			_ = s.write(ctx, inst.ID, sch.ID, map[string]any{"nextExecution": nextValue(sch, now)})
		}
		return
	}
	if err := s.write(ctx, inst.ID, sch.ID, map[string]any{"nextExecution": nextValue(sch, now)}); err != nil {
		s.log.Warn("moving a schedule on failed", zap.String("instance", inst.ID), zap.Error(err))
		return // not run: another scan sees the claim and moves it on
	}
	key := inst.ID + "/" + sch.ID
	s.running.Store(key, true)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.running.Delete(key)
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-s.sem }()
		s.runs.Add(1)
		err := s.run.RunScheduled(ctx, inst, sch)
		out := map[string]any{"lastExecuted": FormatTime(now), "lastExecutionSucceeded": err == nil, "lastExecutionError": nil}
		if err != nil {
			s.failed.Add(1)
			out["lastExecutionError"] = err.Error()
		}
		if err := s.write(context.WithoutCancel(ctx), inst.ID, sch.ID, out); err != nil {
			s.log.Warn("writing a scheduled run's outcome failed", zap.String("instance", inst.ID), zap.Error(err))
		}
	}()
}

// nextValue is the nextExecution after a tick run at now: the first tick
// of the grid after now (so ticks missed while no process ran are run
// once), null when the schedule is over.
func nextValue(sch *Schedule, now time.Time) any {
	next := sch.After(maxTime(now, sch.Next), false)
	if next.IsZero() {
		return nil
	}
	return FormatTime(next)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// write sets fields of a schedule that still exists.
func (s *Service) write(ctx context.Context, instanceID, id string, set map[string]any) error {
	if _, err := s.st.Get(ctx, instanceID, Type, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil // deleted meanwhile
		}
		return err
	}
	_, err := s.st.Write(ctx, instanceID, []store.Op{{Kind: store.OpUpsert, Type: Type, ID: id, Now: s.cfg.Now().UTC(), Set: set}}, store.Quota{})
	return err
}

// clean removes the claims older than three times Config.Stale.
func (s *Service) clean(ctx context.Context, now time.Time) {
	claims, err := s.st.ListDocs(ctx, docTick)
	if err != nil {
		return
	}
	for key, raw := range claims {
		var c claim
		if json.Unmarshal(raw, &c) == nil && now.Sub(c.At) > 3*s.cfg.Stale {
			_ = s.st.DeleteDoc(ctx, docTick, key)
		}
	}
}
