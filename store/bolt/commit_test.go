package bolt

import (
	"errors"
	"fmt"
	"sync"
	"testing"

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
