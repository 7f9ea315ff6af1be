package bolt

import (
	"fmt"
	"runtime"
	"time"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// Group commit. bbolt has one writer at a time, and with synced commits
// each transaction costs a write and a sync of its pages (journal.go).
// Every write goes to one committer
// goroutine, which runs whatever writes have queued up while the previous
// transaction committed as one transaction: a lone write commits at once
// (bbolt's own Batch would wait for a timer), and under load one commit
// serves many writes.
//
// Under load the committer also waits a little for writers it expects.
// Each commit counts the writers it saw: its own writes and those that
// queued up while it ran. When the next batch holds fewer than three
// quarters of that, the committer waits for more, for at most as long as
// the last commit took (and never more than Config.CommitWait, 1 ms by
// default). Without the wait,
// c writers in a closed loop settle into alternating groups of about c/2
// (one group commits while the other is answered and sends its next
// write), and which grouping they fall into is chance: with 32 writers on
// one core, commits of 17 writes gave 6,300-8,500 creates/s and commits of
// 25 gave 9,100-10,800 (corebench d_create_book), since each commit costs
// its fixed pages, its syncs (then two fdatasyncs, 0.14-0.23 ms of CPU
// each pair on the test host) and the wake-ups around them. A lone writer never waits: it
// saw no other.
//
// The writes of one transaction apply in arrival order, as if serial. When
// one fails, the transaction is rolled back, that write gets its error
// (which it would have met run in this order too: the writes before it are
// exactly the ones committed before it), and the others run again in a new
// transaction. A write function may therefore run more than once and must
// be idempotent: it must not change anything outside the transaction.

// call is one write waiting for the committer.
type call struct {
	fn   func(*bbolt.Tx) error
	done chan error
}

// update runs fn in a write transaction, possibly shared with other writes,
// and returns fn's error or the commit's.
func (s *Store) update(fn func(*bbolt.Tx) error) error {
	c := &call{fn: fn, done: make(chan error, 1)}
	s.sending.Add(1)
	select {
	case s.calls <- c:
	case <-s.closed:
		s.sending.Add(-1)
		return fmt.Errorf("bolt: %w", store.ErrUnavailable)
	}
	return <-c.done
}

// commitLoop is the committer goroutine; it stops when the store closes.
func (s *Store) commitLoop() {
	defer close(s.done)
	var (
		batch   []*call
		writers int           // the writers the last commit saw
		took    time.Duration // how long the last commit took
	)
	wait := time.NewTimer(time.Hour)
	wait.Stop()
	for {
		select {
		case c := <-s.calls:
			s.sending.Add(-1)
			batch = append(batch[:0], c)
		case <-s.closed:
			return
		}
		// Let the goroutines that are ready to run go first: under load,
		// they are requests on their way to a write of their own, and they
		// join this transaction instead of each waiting for a commit of
		// its own. The wake-up of this goroutine by the first write's send
		// would otherwise run it next, with a batch of one. When nothing
		// else is ready, Gosched returns at once.
		for range maxYields {
			runtime.Gosched()
			if !s.drain(&batch) {
				break
			}
		}
		if want := min(writers*3/4, s.cfg.BatchSize); len(batch) < want {
			s.await(&batch, want, min(took, s.cfg.CommitWait), wait)
		}
		start := time.Now()
		s.commit(batch)
		took = time.Since(start)
		writers = len(batch) + int(s.sending.Load())
		clear(batch) // let the calls be collected
	}
}

// await adds writes to batch until it holds want of them, for at most d.
func (s *Store) await(batch *[]*call, want int, d time.Duration, t *time.Timer) {
	if d <= 0 {
		return
	}
	t.Reset(d)
	defer t.Stop()
	for len(*batch) < want {
		select {
		case c := <-s.calls:
			s.sending.Add(-1)
			*batch = append(*batch, c)
		case <-t.C:
			return
		case <-s.closed:
			return // the batch still commits: its writers are waiting
		}
	}
}

// maxYields bounds how often the committer yields for more writes to
// join a transaction: it yields again as long as the last yield brought
// some.
const maxYields = 4

// drain moves the queued writes into batch, up to BatchSize; it reports
// whether it moved any.
func (s *Store) drain(batch *[]*call) bool {
	n := len(*batch)
	for len(*batch) < s.cfg.BatchSize {
		select {
		case c := <-s.calls:
			s.sending.Add(-1)
			*batch = append(*batch, c)
		default:
			return len(*batch) > n
		}
	}
	return len(*batch) > n
}

// commit runs a batch of writes in one transaction, taking out the ones
// that fail.
func (s *Store) commit(batch []*call) {
	for len(batch) > 0 {
		failed := -1
		var failErr error
		s.ids.written()
		err := s.db.Update(func(tx *bbolt.Tx) error {
			for i, c := range batch {
				if err := safeCall(c.fn, tx); err != nil {
					failed, failErr = i, err
					return err
				}
			}
			return nil
		})
		s.ids.written()
		if failed < 0 {
			err = translate(err)
			for _, c := range batch {
				c.done <- err
			}
			return
		}
		batch[failed].done <- translate(failErr)
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

// safeCall runs a write function, turning a panic into an error so that
// one bad write cannot stop the committer.
func safeCall(fn func(*bbolt.Tx) error, tx *bbolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bolt: write panicked: %v", p)
		}
	}()
	return fn(tx)
}
