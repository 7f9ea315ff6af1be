package bolt

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
)

// TestGroupCommit sends many writes at once, some failing and one
// panicking: each write gets its own outcome, and exactly the successful
// ones are committed.
func TestGroupCommit(t *testing.T) {
	s := openTemp(t, testConfig())
	errOdd := errors.New("odd")
	const n = 60
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.update(func(tx *bbolt.Tx) error {
				b, err := tx.Bucket(bucketDocs).CreateBucketIfNotExists([]byte("k"))
				if err != nil {
					return err
				}
				if err := b.Put(fmt.Appendf(nil, "%02d", i), []byte("x")); err != nil {
					return err
				}
				switch {
				case i == 7:
					panic("boom")
				case i%2 == 1:
					return errOdd
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case i == 7:
			if err == nil {
				t.Errorf("write %d panicked but got no error", i)
			}
		case i%2 == 1:
			if !errors.Is(err, errOdd) {
				t.Errorf("write %d: %v, want its own error", i, err)
			}
		case err != nil:
			t.Errorf("write %d: %v", i, err)
		}
	}
	docs, err := s.ListDocs(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != n/2 {
		t.Errorf("%d writes committed, want %d", len(docs), n/2)
	}
	for k := range docs {
		var i int
		fmt.Sscanf(k, "%d", &i)
		if i%2 == 1 {
			t.Errorf("failed write %d committed", i)
		}
	}
}

func TestCloseWhileWriting(t *testing.T) {
	s, err := Open(t.TempDir()+"/core.db", testConfig())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.PutDoc(t.Context(), "k", fmt.Sprint(i), []byte("x"))
			if err != nil && !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("PutDoc during Close: %v", err)
			}
		}()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCommitWaitsForExpectedWriters: once commits have seen several
// writers, a write that arrives alone waits for the writers the committer
// expects, and they commit in one transaction with it. Progress, not the
// clock, orders the steps; the one bound is the wait itself (as long as
// the last commit took, held here for two seconds).
func TestCommitWaitsForExpectedWriters(t *testing.T) {
	cfg := testConfig()
	cfg.CommitWait = time.Minute
	s := openTemp(t, cfg)
	var mu sync.Mutex
	txOf := map[string]int{}
	// put writes key; hold, when not nil, is waited for inside the
	// transaction, after started is closed.
	put := func(key string, started chan<- struct{}, hold <-chan struct{}) error {
		var once sync.Once
		return s.update(func(tx *bbolt.Tx) error {
			if hold != nil {
				once.Do(func() { close(started) })
				<-hold
			}
			mu.Lock()
			txOf[key] = tx.ID()
			mu.Unlock()
			b, err := tx.Bucket(bucketDocs).CreateBucketIfNotExists([]byte("k"))
			if err != nil {
				return err
			}
			return b.Put([]byte(key), []byte("x"))
		})
	}
	var wg sync.WaitGroup
	write := func(key string, started chan<- struct{}, hold <-chan struct{}) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := put(key, started, hold); err != nil {
				t.Errorf("write %s: %v", key, err)
			}
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if t.Failed() {
				t.Fatalf("gave up waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}

	// A commit held open while seven writers queue behind it: the
	// committer sees eight.
	started, hold := make(chan struct{}), make(chan struct{})
	write("a0", started, hold)
	<-started
	started2, hold2 := make(chan struct{}), make(chan struct{})
	write("b0", started2, hold2) // holds the next commit, below
	for i := 1; i < 7; i++ {
		write(fmt.Sprintf("b%d", i), nil, nil)
	}
	waitFor("seven queued writers", func() bool { return s.sending.Load() == 7 })
	close(hold)
	// The seven commit together (six of eight is enough), and that commit
	// takes two seconds: the bound of the next wait.
	<-started2
	time.Sleep(2 * time.Second)
	close(hold2)
	wg.Wait()

	// A write alone: the committer expects seven writers and waits for
	// five (three quarters). Four more come a while after it has taken the
	// first: longer than its yields to ready goroutines, much shorter
	// than the wait.
	write("c0", nil, nil)
	waitFor("the committer to take c0", func() bool { return s.sending.Load() == 0 })
	time.Sleep(50 * time.Millisecond)
	for i := 1; i < 5; i++ {
		write(fmt.Sprintf("c%d", i), nil, nil)
	}
	wg.Wait()
	for i := 1; i < 5; i++ {
		if a, b := txOf["c0"], txOf[fmt.Sprintf("c%d", i)]; a != b {
			t.Errorf("c0 committed in transaction %d, c%d in %d: the first write did not wait for the expected writers", a, i, b)
		}
	}
	for i := 1; i < 7; i++ {
		if a, b := txOf["b0"], txOf[fmt.Sprintf("b%d", i)]; a != b {
			t.Errorf("b0 committed in transaction %d, b%d in %d: the queued writes did not share one", a, i, b)
		}
	}
	docs, err := s.ListDocs(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 13 {
		t.Errorf("%d writes committed, want 13", len(docs))
	}
}
