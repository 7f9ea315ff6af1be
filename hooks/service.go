package hooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Service delivers the event hooks of every instance that has some, one
// worker (goroutine) per instance this process delivers for.
type Service struct {
	st    store.Store
	reg   *tenant.Directory
	seal  Sealer
	cfg   Config
	log   *zap.Logger
	send  *sender
	owner string

	mu      sync.Mutex
	workers map[string]*worker
	stats   stats
}

type stats struct {
	delivered, failed, disabled, lost atomic.Uint64
}

// Stats counts what a Service did since it started.
type Stats struct {
	// Delivered counts successful posts; Failed the failed ones (each
	// is retried, until the hook is disabled).
	Delivered, Failed uint64
	// Disabled counts hooks the service disabled; Lost the changes
	// trimmed from the feed before a hook could deliver them.
	Disabled, Lost uint64
}

// New returns the service over the store, the instances and the key ring
// that sealed the hooks' secrets.
func New(st store.Store, reg *tenant.Directory, seal Sealer, cfg Config, log *zap.Logger) *Service {
	cfg = cfg.withDefaults()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Service{st: st, reg: reg, seal: seal, cfg: cfg, log: log, send: newSender(cfg),
		owner: hex.EncodeToString(b[:]), workers: map[string]*worker{}}
}

// Stats returns the counts so far.
func (s *Service) Stats() Stats {
	return Stats{Delivered: s.stats.delivered.Load(), Failed: s.stats.failed.Load(),
		Disabled: s.stats.disabled.Load(), Lost: s.stats.lost.Load()}
}

// Run delivers until ctx ends, then stops the workers (each writes its
// cursors) and gives up this process's leases.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Scan)
	defer t.Stop()
	for {
		if err := s.scan(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("looking for event hooks failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			s.stopAll(context.WithoutCancel(ctx))
			return
		case <-t.C:
		}
	}
}

// scan starts a worker for each instance with hooks that this process
// may deliver for, renews its leases and stops the workers it may no
// longer run.
func (s *Service) scan(ctx context.Context) error {
	hooked, err := s.st.ListDocs(ctx, docHooked)
	if err != nil {
		return err
	}
	byID := map[string]*tenant.Instance{}
	for _, inst := range s.reg.Instances() {
		byID[inst.ID] = inst
	}
	var leases map[string]heldLease
	if s.cfg.Shared {
		var stale []string
		if leases, stale, err = readLeases(ctx, s.st); err != nil {
			return err
		}
		for _, key := range stale {
			_ = s.st.DeleteDoc(ctx, docLease, key)
		}
	}
	keep := map[string]bool{}
	for id := range hooked {
		inst := byID[id]
		if inst == nil {
			continue
		}
		until := time.Unix(0, math.MaxInt64)
		if s.cfg.Shared {
			cur, ok := leases[id]
			if until, err = claim(ctx, s.st, id, s.owner, cur, ok, time.Now(), s.cfg.Lease); err != nil {
				s.log.Warn("renewing an event hook lease failed", zap.String("instance", id), zap.Error(err))
				s.mu.Lock()
				keep[id] = s.workers[id] != nil // it stops posting when the lease runs out
				s.mu.Unlock()
				continue
			}
			if until.IsZero() {
				continue
			}
		}
		keep[id] = true
		s.ensure(ctx, inst, until)
	}
	s.mu.Lock()
	var stop []*worker
	for id, w := range s.workers {
		if !keep[id] {
			w.gone.Store(byID[id] == nil)
			stop = append(stop, w)
			delete(s.workers, id)
		}
	}
	s.mu.Unlock()
	for _, w := range stop {
		w.cancel()
		<-w.done
	}
	return nil
}

// ensure starts the worker of an instance unless it runs, and tells it
// until when its lease holds.
func (s *Service) ensure(ctx context.Context, inst *tenant.Instance, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.workers[inst.ID]
	if w != nil {
		w.inst.Store(inst)
		w.until.Store(until.UnixNano())
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	w = &worker{s: s, id: inst.ID, cancel: cancel, done: make(chan struct{}), runs: map[string]*run{}, reload: true}
	w.inst.Store(inst)
	w.until.Store(until.UnixNano())
	s.workers[inst.ID] = w
	go w.main(wctx)
}

// stopAll stops every worker and gives up the leases.
func (s *Service) stopAll(ctx context.Context) {
	s.mu.Lock()
	ws := s.workers
	s.workers = map[string]*worker{}
	s.mu.Unlock()
	for _, w := range ws {
		w.cancel()
	}
	for id, w := range ws {
		<-w.done
		if s.cfg.Shared {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := release(rctx, s.st, id, s.owner); err != nil {
				s.log.Warn("giving up an event hook lease failed", zap.String("instance", id), zap.Error(err))
			}
			cancel()
		}
	}
}
