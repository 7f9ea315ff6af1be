package mail

import (
	"context"
	"errors"
	"time"

	"github.com/corehq/core/internal/periodic"
	"github.com/corehq/core/store"
	"github.com/corehq/core/tenant"
)

// Config is how a Worker sends.
type Config struct {
	// Interval is how often the outbox is read for due messages (a
	// message queued by this process is sent at once).
	Interval time.Duration
	// Backoff is the wait after the first temporary failure; it doubles
	// after each, up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// MaxAttempts is how many attempts a message gets before it fails.
	MaxAttempts int
	// ClaimLease is how long an attempt claimed by a process that
	// recorded no outcome holds before another process takes it over.
	ClaimLease time.Duration
	// Keep is how long sent and failed messages stay visible.
	Keep time.Duration
}

// DefaultConfig: every 2 s; retries after 10 s, 20 s, … up to 15 min,
// 12 attempts (about 1 h 40 min in all); a lease of 5 min (an attempt
// takes at most one minute); sent and failed messages kept a day.
func DefaultConfig() Config {
	return Config{Interval: 2 * time.Second, Backoff: 10 * time.Second, MaxBackoff: 15 * time.Minute,
		MaxAttempts: 12, ClaimLease: 5 * time.Minute, Keep: 24 * time.Hour}
}

// Worker sends the outbox's due messages through their instances'
// servers.
type Worker struct {
	cfg       Config
	out       *Outbox
	instances func() []*tenant.Instance
	owner     string
	wake      chan struct{}
}

// NewWorker returns a worker sending o's messages with the settings of
// the instances instances returns (tenant.Directory.Instances).
func NewWorker(cfg Config, o *Outbox, instances func() []*tenant.Instance) *Worker {
	w := &Worker{cfg: cfg, out: o, instances: instances, owner: store.NewID(), wake: make(chan struct{}, 1)}
	o.wake = w.wake
	return w
}

// Run sends until ctx ends: at each interval, and when this process
// queues a message. onErr hears of failures to read or write the outbox.
func (w *Worker) Run(ctx context.Context, onErr func(error)) {
	go periodic.Run(ctx, w.cfg.Interval, w.Pass, onErr)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		}
		if err := w.Pass(ctx); err != nil && onErr != nil && ctx.Err() == nil {
			onErr(err)
		}
	}
}

// Pass makes one attempt of every due message, and removes the sent and
// failed messages older than Keep. A process none of whose instances has
// a mail server reads nothing: no message can be queued without one (the
// messages of an instance that drops its server wait until one has a
// server again).
func (w *Worker) Pass(ctx context.Context) error {
	byID := map[string]*tenant.Instance{}
	for _, inst := range w.instances() {
		if inst.Settings.SMTP != nil {
			byID[inst.ID] = inst
		}
	}
	if len(byID) == 0 {
		return nil
	}
	ms, err := w.out.all(ctx, "")
	if err != nil {
		return err
	}
	now := w.out.now()
	var errs []error
	for _, m := range ms {
		inst := byID[m.Instance]
		switch {
		case m.Status != StatusQueued && now.Sub(m.NextAttempt) > w.cfg.Keep:
			errs = append(errs, w.out.remove(ctx, m))
		case m.Status != StatusQueued || m.NextAttempt.After(now):
		case inst == nil:
			// Its instance was deleted (or this process does not know
			// it yet): nothing to send with.
			continue
		default:
			errs = append(errs, w.attempt(ctx, inst, m))
		}
	}
	return errors.Join(errs...)
}

// attempt claims and makes the message's next attempt, and records its
// outcome.
func (w *Worker) attempt(ctx context.Context, inst *tenant.Instance, m *Message) error {
	m, mine, err := w.out.claim(ctx, m, w.owner, w.cfg.ClaimLease)
	if err != nil || !mine {
		return err
	}
	parts, err := w.out.open(m)
	if err != nil {
		return err
	}
	permanent, sendErr := true, errors.New("the instance has no smtp setting")
	if s := inst.Settings.SMTP; s != nil {
		permanent, sendErr = deliver(ctx, *s, parts.To, parts.Content, m.ID+"@"+inst.Domain)
	} else {
		permanent = false // the operator may set it yet
	}
	now := w.out.now().UTC()
	m.Attempts++
	m.NextAttempt = now
	switch {
	case sendErr == nil:
		m.Status, m.Sent, m.LastError = StatusSent, now, ""
	case permanent || m.Attempts >= w.cfg.MaxAttempts:
		m.Status, m.LastError = StatusFailed, sendErr.Error()
	default:
		m.LastError = sendErr.Error()
		m.NextAttempt = now.Add(w.backoff(m.Attempts))
	}
	// Recorded even when ctx has ended: the attempt was made.
	return w.out.put(context.WithoutCancel(ctx), m)
}

// backoff is the wait after the attempts-th failed attempt.
func (w *Worker) backoff(attempts int) time.Duration {
	d := w.cfg.Backoff
	for i := 1; i < attempts && d < w.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, w.cfg.MaxBackoff)
}
