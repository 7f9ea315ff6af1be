package bolt

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestJournalFill: once records pass a sixteenth of the journal, the
// filler writes the rest of it while writers commit, neither writes over
// the other, and after a crash every acknowledged write is there, both
// from records written while the filler ran and from records written over
// its zeros.
func TestJournalFill(t *testing.T) {
	const capacity = 8 << 20
	path := filepath.Join(t.TempDir(), "core.db")
	s, disk := openCheckpointed(t, path, 3, capacity)
	epoch := s.journal.epoch

	// Four writers at once, so that records are written while the filler
	// writes its chunks.
	write := func(from, to int) {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := from + w; i < to; i += 4 {
					putDoc(t, s, fmt.Sprintf("k%05d", i), docValue(i))
				}
			})
		}
		wg.Wait()
	}
	write(3, 100)
	if !s.journal.fill.started {
		t.Fatalf("the filler did not start: the journal's records end at %d of %d", s.journal.pos, int64(capacity))
	}
	write(100, 140)
	<-s.journal.fill.done
	st, err := os.Stat(journalPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != capacity {
		t.Fatalf("the filled journal is %d bytes, want its capacity %d", st.Size(), capacity)
	}
	// Records over the zeros (with no checkpoint, every record is in the
	// one pass over the journal that the filler ran ahead of).
	write(140, 160)
	if s.journal.epoch != epoch {
		t.Fatalf("the journal checkpointed (epoch %d → %d): the crash copy below needs one epoch", epoch, s.journal.epoch)
	}

	// None of the in-place writes since the checkpoint reached the disk.
	checkDocs(t, crashCopy(t, disk, path, -1), 160)
	// The journal cut where the records end: the zeros past them are no
	// part of the replay.
	checkDocs(t, crashCopy(t, disk, path, s.journal.pos), 160)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkDocs(t, path, 160)
}

// TestJournalFillNotForSmallUse: a store whose records stay within a
// sixteenth of the journal never fills it.
func TestJournalFillNotForSmallUse(t *testing.T) {
	const capacity = 64 << 20
	path := filepath.Join(t.TempDir(), "core.db")
	s, err := Open(path, syncedConfig(capacity))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		putDoc(t, s, fmt.Sprintf("k%05d", i), docValue(i))
	}
	if s.journal.fill.started {
		t.Fatalf("the filler started with the records ending at %d of %d", s.journal.pos, int64(capacity))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(journalPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() >= capacity/fillAfter {
		t.Fatalf("the journal of 20 small commits is %d bytes", st.Size())
	}
	checkDocs(t, path, 20)
}
