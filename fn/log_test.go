package fn

import (
	"context"
	"fmt"
	"testing"
	"time"

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
