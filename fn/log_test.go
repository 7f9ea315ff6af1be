package fn

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/google/go-cmp/cmp"
)

func TestLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	l := NewLog(e.st, LogConfig{Entries: 5, MaxBytes: 1 << 20, FlushInterval: time.Hour})
	entry := func(i int) LogEntry {
		return LogEntry{Time: time.Unix(int64(i), 0).UTC(), Level: "log", Function: "f@v1", Call: "c", Message: fmt.Sprint("line ", i)}
	}
	for i := range 3 {
		l.Append("a", []LogEntry{entry(i)})
	}
	l.Append("b", []LogEntry{entry(100)})
	l.Append("", []LogEntry{entry(200)}) // no instance: dropped

	got, err := l.Read(ctx, "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]LogEntry{entry(0), entry(1), entry(2)}, got); d != "" {
		t.Errorf("Read a (-want +got):\n%s", d)
	}
	// The ring keeps the newest entries.
	for i := 3; i < 9; i++ {
		l.Append("a", []LogEntry{entry(i)})
	}
	got, _ = l.Read(ctx, "a", 2)
	if d := cmp.Diff([]LogEntry{entry(7), entry(8)}, got); d != "" {
		t.Errorf("Read a, limit 2 (-want +got):\n%s", d)
	}
	got, _ = l.Read(ctx, "a", 0)
	if len(got) != 5 || got[0] != entry(4) {
		t.Errorf("the ring holds %v", got)
	}
	// Close writes what is buffered; another Log on the store reads it.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	other := NewLog(e.st, DefaultLogConfig())
	defer other.Close()
	got, _ = other.Read(ctx, "b", 0)
	if d := cmp.Diff([]LogEntry{entry(100)}, got); d != "" {
		t.Errorf("b after Close (-want +got):\n%s", d)
	}
	if err := other.Clear(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	got, _ = other.Read(ctx, "b", 0)
	if len(got) != 0 {
		t.Errorf("after Clear: %v", got)
	}
	got, _ = other.Read(ctx, "never", 0)
	if got == nil || len(got) != 0 {
		t.Errorf("an instance without a log reads %#v, want an empty list", got)
	}
}

func TestLogBytesBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	l := NewLog(e.st, LogConfig{Entries: 100, MaxBytes: 300, FlushInterval: 10 * time.Millisecond})
	defer l.Close()
	for i := range 10 {
		l.Append("a", []LogEntry{{Level: "log", Message: fmt.Sprintf("%02d%s", i, string(make([]byte, 40)))}})
	}
	got, err := l.Read(context.Background(), "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Message[:2] != "09" {
		t.Errorf("kept %d entries, want the newest 2 (about 104 bytes each within 300)", len(got))
	}
}

// TestReadWaitsForFlushUnderWay: a flush has taken an instance's
// entries out of the buffer and is writing them (held in the store's
// PutDoc here) when a Read of that instance comes: the Read answers
// only once they are written, with all of them, never the log without
// them. A Clear of another instance whose entries the same flush took
// is not undone by the flush's later write. The test gives a Read that
// does not wait a moment to answer early, and fails if it does; one
// that waits is never failed by a slow machine.
//
// hostile checklist 39: the function log a flood is capped into reads
// whole, whatever the flusher is doing.
func TestReadWaitsForFlushUnderWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &heldStore{Store: bolttest.Open(t), key: "a", entered: make(chan struct{}), release: make(chan struct{})}
	l := NewLog(st, LogConfig{Entries: 100, MaxBytes: 1 << 20, FlushInterval: time.Hour})
	defer l.Close()
	entry := func(i int) LogEntry {
		return LogEntry{Time: time.Unix(int64(i), 0).UTC(), Level: "log", Function: "f@v1", Call: "c", Message: fmt.Sprint("line ", i)}
	}
	l.Append("a", []LogEntry{entry(0), entry(1)})
	l.Append("b", []LogEntry{entry(2)})

	flushed := make(chan error, 1)
	go func() { flushed <- l.Flush(ctx) }()
	<-st.entered // the flush holds a's entries, b's too

	type answer struct {
		es  []LogEntry
		err error
	}
	read := make(chan answer, 1)
	go func() {
		es, err := l.Read(ctx, "a", 0)
		read <- answer{es, err}
	}()
	cleared := make(chan error, 1)
	go func() { cleared <- l.Clear(ctx, "b") }()
	select {
	case a := <-read:
		t.Fatalf("Read answered %v (%v) while the flush of its entries was under way", a.es, a.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(st.release)
	a := <-read
	if a.err != nil {
		t.Fatal(a.err)
	}
	if d := cmp.Diff([]LogEntry{entry(0), entry(1)}, a.es); d != "" {
		t.Errorf("Read during a flush (-want +got):\n%s", d)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if err := <-cleared; err != nil {
		t.Fatal(err)
	}
	if es, err := l.Read(ctx, "b", 0); err != nil || len(es) != 0 {
		t.Errorf("b after its Clear: %v (%v), want no entries", es, err)
	}
}

// heldStore holds the first PutDoc of key's function log until release
// is closed, saying so on entered.
type heldStore struct {
	store.Store
	key              string
	entered, release chan struct{}
	once             sync.Once
}

func (s *heldStore) PutDoc(ctx context.Context, kind, key string, doc []byte) error {
	if kind == docLog && key == s.key {
		s.once.Do(func() {
			close(s.entered)
			<-s.release
		})
	}
	return s.Store.PutDoc(ctx, kind, key, doc)
}
