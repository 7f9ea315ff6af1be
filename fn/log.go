package fn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/corehq/core/internal/defaults"
	"github.com/corehq/core/store"
)

// docLog is the store document kind of function logs, keyed by instance
// id.
const docLog = "function-log"

// Log keeps each instance's function log: a bounded ring of entries in a
// store document, so that it survives restarts and is shared by every
// process on the same store. Entries are buffered in memory and written
// every LogConfig.FlushInterval (and before a Read), so a call never
// waits for the store. Two processes flushing the same instance at the
// same moment may lose one batch: the log is a debugging aid, not an
// audit trail. Safe for concurrent use.
//
// Lifecycle: NewLog starts the flusher; Close flushes and stops it.
type Log struct {
	st  store.Store
	cfg LogConfig

	mu      sync.Mutex
	pending map[string][]LogEntry // by instance id

	// fmu is held from taking entries out of pending until they are
	// in the store: by a flush over the whole batch, by Read over its
	// flush and its read, by Clear. So a Read sees every entry appended
	// before it, even those a flush under way had taken (it waits for
	// that flush), and a Clear is never undone by a flush that took its
	// entries before it.
	fmu sync.Mutex

	stop, done chan struct{}
	once       sync.Once
}

var _ LogSink = (*Log)(nil)

// logDoc is an instance's log as stored, oldest entry first.
type logDoc struct {
	Entries []LogEntry `json:"entries"`
}

// NewLog returns the function logs kept in st and starts the flusher.
// Fields of cfg that are not positive take their defaults.
func NewLog(st store.Store, cfg LogConfig) *Log {
	cfg = defaults.Fill(cfg, DefaultLogConfig())
	l := &Log{st: st, cfg: cfg, pending: map[string][]LogEntry{}, stop: make(chan struct{}), done: make(chan struct{})}
	go l.flusher()
	return l
}

func (l *Log) flusher() {
	defer close(l.done)
	t := time.NewTicker(l.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			// An entry that cannot be written now is kept for the next
			// tick (bounded by the ring's size); Close reports the last
			// failure.
			_ = l.Flush(context.Background())
		case <-l.stop:
			return
		}
	}
}

// Append buffers entries for an instance (LogSink); it never blocks on
// the store.
func (l *Log) Append(instanceID string, entries []LogEntry) {
	if instanceID == "" || len(entries) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[instanceID] = l.trim(append(l.pending[instanceID], entries...))
}

// trim keeps the newest entries within the ring's bounds.
func (l *Log) trim(es []LogEntry) []LogEntry {
	if len(es) > l.cfg.Entries {
		es = es[len(es)-l.cfg.Entries:]
	}
	size := 0
	for i := len(es) - 1; i >= 0; i-- {
		size += len(es[i].Message) + 64
		if size > l.cfg.MaxBytes {
			return es[i+1:]
		}
	}
	return es
}

// Flush writes every buffered entry to the store.
func (l *Log) Flush(ctx context.Context) error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	l.mu.Lock()
	batch := l.pending
	l.pending = map[string][]LogEntry{}
	l.mu.Unlock()
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(batch)) {
		if err := l.write(ctx, id, batch[id]); err != nil {
			errs = append(errs, err)
			l.requeue(id, batch[id])
		}
	}
	return errors.Join(errs...)
}

// flushOne writes an instance's buffered entries; fmu is held.
func (l *Log) flushOne(ctx context.Context, id string) error {
	l.mu.Lock()
	es := l.pending[id]
	delete(l.pending, id)
	l.mu.Unlock()
	if len(es) == 0 {
		return nil
	}
	if err := l.write(ctx, id, es); err != nil {
		l.requeue(id, es)
		return err
	}
	return nil
}

// requeue puts entries that could not be written back before the ones
// appended since.
func (l *Log) requeue(id string, es []LogEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[id] = l.trim(append(es, l.pending[id]...))
}

// write appends entries to an instance's log document; fmu is held.
func (l *Log) write(ctx context.Context, id string, es []LogEntry) error {
	d, err := l.read(ctx, id)
	if err != nil {
		return err
	}
	d.Entries = l.trim(append(d.Entries, es...))
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("fn: encoding the function log of %s: %w", id, err)
	}
	if err := l.st.PutDoc(ctx, docLog, id, raw); err != nil {
		return fmt.Errorf("fn: writing the function log of %s: %w", id, err)
	}
	return nil
}

func (l *Log) read(ctx context.Context, id string) (logDoc, error) {
	var d logDoc
	raw, err := l.st.GetDoc(ctx, docLog, id)
	if errors.Is(err, store.ErrNotFound) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("fn: reading the function log of %s: %w", id, err)
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("fn: decoding the function log of %s: %w", id, err)
	}
	return d, nil
}

// Read returns an instance's newest entries, at most limit (all when
// limit <= 0), oldest first. Buffered entries are written first.
func (l *Log) Read(ctx context.Context, instanceID string, limit int) ([]LogEntry, error) {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if err := l.flushOne(ctx, instanceID); err != nil {
		return nil, err
	}
	d, err := l.read(ctx, instanceID)
	if err != nil {
		return nil, err
	}
	es := d.Entries
	if limit > 0 && len(es) > limit {
		es = es[len(es)-limit:]
	}
	if es == nil {
		es = []LogEntry{}
	}
	return es, nil
}

// Clear removes an instance's log, buffered entries included.
func (l *Log) Clear(ctx context.Context, instanceID string) error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	l.mu.Lock()
	delete(l.pending, instanceID)
	l.mu.Unlock()
	if err := l.st.DeleteDoc(ctx, docLog, instanceID); err != nil {
		return fmt.Errorf("fn: removing the function log of %s: %w", instanceID, err)
	}
	return nil
}

// Close stops the flusher and writes what is buffered; call it before
// closing the store.
func (l *Log) Close() error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		err = l.Flush(context.Background())
	})
	return err
}
