package bolt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/storetest"
)

// syncedConfig is testConfig with synced commits, so through the journal.
func syncedConfig(journalSize int64) Config {
	cfg := testConfig()
	cfg.NoSync = false
	cfg.JournalSize = journalSize
	return cfg
}

// TestJournalConformance runs the store's conformance suite on synced
// commits with a journal of 256 KiB: many checkpoints, and commits too
// large for it that are written in place.
func TestJournalConformance(t *testing.T) {
	cfg := syncedConfig(256 << 10)
	storetest.RunWith(t, func(t *testing.T) store.Store {
		return openTemp(t, cfg)
	}, storetest.Options{HopLimit: cfg.HopLimit, Reopen: func(t *testing.T, s store.Store) store.Store {
		t.Helper()
		path := s.(*Store).db.Path()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		n, err := Open(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}, ForgetUsage: forgetUsage})
}

// putDoc commits key → value in the docs bucket "j", one commit of its own.
func putDoc(t *testing.T, s *Store, key string, value []byte) {
	t.Helper()
	err := s.update(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketDocs).CreateBucketIfNotExists([]byte("j"))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), value)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// docValue is the value putDoc writes for key i: sizes from a few bytes
// to several pages, so that commits carry overflow pages too.
func docValue(i int) []byte {
	return bytes.Repeat([]byte{byte('a' + i%26)}, 1+(i*1117)%9000)
}

// checkDocs opens the store file at path and checks that it is whole
// (bbolt's own check) and holds exactly keys 0..n-1 of putDoc.
func checkDocs(t *testing.T, path string, n int) {
	t.Helper()
	s, err := Open(path, syncedConfig(0))
	if err != nil {
		t.Fatalf("opening after the crash: %v", err)
	}
	defer s.Close()
	err = s.view(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return fmt.Errorf("bbolt check: %w", err)
		}
		b := tx.Bucket(bucketDocs).Bucket([]byte("j"))
		if b == nil {
			if n == 0 {
				return nil
			}
			return fmt.Errorf("bucket j missing, want %d keys", n)
		}
		got := 0
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var i int
			if _, err := fmt.Sscanf(string(k), "k%05d", &i); err != nil || i >= n {
				return fmt.Errorf("unexpected key %q (want k00000..k%05d)", k, n-1)
			}
			if !bytes.Equal(v, docValue(i)) {
				return fmt.Errorf("key %q: %d bytes, not the value written (%d bytes)", k, len(v), len(docValue(i)))
			}
			got++
		}
		if got != n {
			return fmt.Errorf("%d keys, want %d", got, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copyFile copies src to dst, cut to size bytes when size >= 0.
func copyFile(t *testing.T, src, dst string, size int64) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var r io.Reader = in
	if size >= 0 {
		r = io.LimitReader(in, size)
	}
	if _, err := io.Copy(out, r); err != nil {
		t.Fatal(err)
	}
}

// crashCopy is the disk after a crash of the machine: the store file as
// it was at the last checkpoint (db), none of the in-place writes since,
// and the journal as it is now (all its records were synced), cut to
// journalSize bytes when that is not negative. It returns the copy's
// store path.
func crashCopy(t *testing.T, db []byte, path string, journalSize int64) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "core.db")
	if err := os.WriteFile(p, db, 0o600); err != nil {
		t.Fatal(err)
	}
	copyFile(t, journalPath(path), journalPath(p), journalSize)
	return p
}

// openCheckpointed opens a synced store at path, writes keys 0..n-1,
// and reopens it (Close checkpoints): it returns the store and its file
// as the disk holds it after that checkpoint.
func openCheckpointed(t *testing.T, path string, n int, journalSize int64) (*Store, []byte) {
	t.Helper()
	s, err := Open(path, syncedConfig(journalSize))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		putDoc(t, s, fmt.Sprintf("k%05d", i), docValue(i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	disk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path, syncedConfig(journalSize)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, disk
}

// TestJournalReplaysAfterCrash: writes acknowledged after a checkpoint
// are all there after a crash in which none of their in-place writes
// reached the disk, and after one in which all of them did.
func TestJournalReplaysAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	s, disk := openCheckpointed(t, path, 40, 0)
	for i := 40; i < 100; i++ {
		putDoc(t, s, fmt.Sprintf("k%05d", i), docValue(i))
	}
	// Without the journal, this file holds keys 0..39 only.
	checkDocs(t, crashCopy(t, disk, path, -1), 100)

	// All in-place writes on the disk: replaying again changes nothing.
	dir := t.TempDir()
	copyFile(t, path, filepath.Join(dir, "core.db"), -1)
	copyFile(t, journalPath(path), journalPath(filepath.Join(dir, "core.db")), -1)
	checkDocs(t, filepath.Join(dir, "core.db"), 100)
}

// TestJournalTornRecord: a crash while the last commit's record was
// being written (its write was not acknowledged) loses that commit and
// nothing before it, and leaves a whole file.
func TestJournalTornRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	s, disk := openCheckpointed(t, path, 10, 0)
	for i := 10; i < 30; i++ {
		putDoc(t, s, fmt.Sprintf("k%05d", i), docValue(i))
	}
	before := s.journal.pos
	putDoc(t, s, fmt.Sprintf("k%05d", 30), docValue(30))
	after := s.journal.pos
	for _, cut := range []int64{before + 10, before + journalBlock + 100, after - 1} {
		t.Run(fmt.Sprintf("cut at %d of %d..%d", cut, before, after), func(t *testing.T) {
			checkDocs(t, crashCopy(t, disk, path, cut), 30)
		})
	}
	t.Run("bit flipped", func(t *testing.T) {
		p := crashCopy(t, disk, path, -1)
		f, err := os.OpenFile(journalPath(p), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, after-100); err != nil {
			t.Fatal(err)
		}
		b[0] ^= 1
		if _, err := f.WriteAt(b, after-100); err != nil {
			t.Fatal(err)
		}
		f.Close()
		checkDocs(t, p, 30)
	})
	checkDocs(t, crashCopy(t, disk, path, -1), 31)
}

// TestJournalIgnoresOldEpochs: after a checkpoint, the records of the
// epoch before stay in the journal past the new ones; a crash replays
// the new ones only (replaying the old would put pages of an older state
// over the file).
func TestJournalIgnoresOldEpochs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	// Epoch 1: many commits, whose records fill the journal well past
	// where epoch 2's will end.
	s, disk := openCheckpointed(t, path, 200, 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Epoch 2 on the reopened file: a few commits that change keys of
	// epoch 1.
	s, err := Open(path, syncedConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if disk, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	for i := 200; i < 205; i++ {
		putDoc(t, s, fmt.Sprintf("k%05d", i), docValue(i))
	}
	jf, err := os.Stat(journalPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if jf.Size() <= s.journal.pos+journalBlock {
		t.Fatalf("journal of %d bytes holds no record past epoch 2's end at %d: the test proves nothing", jf.Size(), s.journal.pos)
	}
	checkDocs(t, crashCopy(t, disk, path, -1), 205)
}

// TestJournalCheckpointsWhenFull: a journal too small for many commits
// checkpoints over and over, and a commit larger than it is written in
// place; every write is there after a crash and after a clean close.
func TestJournalCheckpointsWhenFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	s, err := Open(path, syncedConfig(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	epoch := s.journal.epoch
	for i := range 150 {
		putDoc(t, s, fmt.Sprintf("k%05d", i), docValue(i))
	}
	// One commit of 100 keys, far larger than the journal.
	err = s.update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketDocs).Bucket([]byte("j"))
		for i := 150; i < 250; i++ {
			if err := b.Put(fmt.Appendf(nil, "k%05d", i), docValue(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.journal.epoch < epoch+10 {
		t.Fatalf("journal epoch went from %d to %d over 150 commits in 64 KiB: it did not checkpoint", epoch, s.journal.epoch)
	}
	putDoc(t, s, fmt.Sprintf("k%05d", 250), docValue(250))
	dir := t.TempDir()
	copyFile(t, path, filepath.Join(dir, "core.db"), -1)
	copyFile(t, journalPath(path), journalPath(filepath.Join(dir, "core.db")), -1)
	checkDocs(t, filepath.Join(dir, "core.db"), 251)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkDocs(t, path, 251)
}

// TestJournalLocked: a second Open of a file whose journal another Store
// holds waits for it, and fails with ErrUnavailable after OpenTimeout.
func TestJournalLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	cfg := syncedConfig(0)
	cfg.OpenTimeout = 100 * time.Millisecond
	s, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Open(path, cfg); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("second Open: %v, want ErrUnavailable", err)
	}
}

// TestJournalSkipsStaleRecord: a record of the epoch before that sits
// just where the next record of the current epoch would, with the number
// that one would have, is not replayed.
func TestJournalSkipsStaleRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "core.db")
	j, err := openJournal(path, 0o600, DefaultJournalSize, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Epoch 1: three commits of page 5.
	for _, s := range []string{"e1 r1", "e1 r2", "e1 r3"} {
		fakeCommit(t, j, s)
	}
	if err := j.checkpoint(); err != nil {
		t.Fatal(err)
	}
	disk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Epoch 2: two commits, of the same size, so that epoch 1's third
	// record, numbered 3, follows them.
	for _, s := range []string{"e2 r1", "e2 r2"} {
		fakeCommit(t, j, s)
	}
	if got := crashPage5(t, j, disk, path); got != "e2 r2" {
		t.Fatalf("page 5 after replay holds %q, want %q (the last record of epoch 2)", got, "e2 r2")
	}
}

// fakeCommit is a commit of page 5 holding s, then the meta page, as
// bbolt would write them through j.
func fakeCommit(t *testing.T, j *journal, s string) {
	t.Helper()
	page := func(s string) []byte { return append([]byte(s), make([]byte, journalBlock-len(s))...) }
	j.metaEnd = 2 * journalBlock
	if _, err := j.writeAt(page(s), 5*journalBlock); err != nil {
		t.Fatal(err)
	}
	if _, err := j.writeAt(page("meta "+s), 0); err != nil {
		t.Fatal(err)
	}
}

// crashPage5 closes j, opens the crash copy of disk and j's journal
// (crashCopy), which replays it, and returns page 5's text after replay.
func crashPage5(t *testing.T, j *journal, disk []byte, path string) string {
	t.Helper()
	p := crashCopy(t, disk, path, -1)
	if err := j.closeFiles(); err != nil {
		t.Fatal(err)
	}
	r, err := openJournal(p, 0o600, DefaultJournalSize, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.closeFiles()
	got := make([]byte, journalBlock)
	if _, err := r.db.ReadAt(got, 5*journalBlock); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimRight(got, "\x00"))
}

// TestJournalOfDeletedFile: a journal left beside a store file that was
// deleted after a crash is not replayed into the new, empty file.
func TestJournalOfDeletedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	s, disk := openCheckpointed(t, path, 5, 0)
	for i := 5; i < 10; i++ {
		putDoc(t, s, fmt.Sprintf("k%05d", i), docValue(i))
	}
	p := crashCopy(t, disk, path, -1)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	checkDocs(t, p, 0)
}

// TestJournalRandomCrashes writes, overwrites and deletes keys of many
// sizes, a commit at a time, through a journal small enough to
// checkpoint every few commits, and at random commits takes the disk a
// crash would leave: the file as of the last checkpoint (with whatever
// in-place writes followed it in the same commit) and the journal as it
// is. Opened, that disk must hold exactly what the commits acknowledged
// so far wrote, and pass bbolt's check.
func TestJournalRandomCrashes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	s, err := Open(path, syncedConfig(512<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rnd := rand.New(rand.NewPCG(7, 11))
	model := map[string][]byte{}
	disk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	epoch, crashes := s.journal.epoch, 0
	for commit := range 400 {
		// One commit: a few puts and deletes.
		ops := 1 + rnd.IntN(8)
		staged := map[string][]byte{}
		err := s.update(func(tx *bbolt.Tx) error {
			clear(staged)
			b, err := tx.Bucket(bucketDocs).CreateBucketIfNotExists([]byte("r"))
			if err != nil {
				return err
			}
			for range ops {
				k := fmt.Sprintf("k%03d", rnd.IntN(300))
				if rnd.IntN(4) == 0 {
					if err := b.Delete([]byte(k)); err != nil {
						return err
					}
					staged[k] = nil
					continue
				}
				v := bytes.Repeat([]byte{byte(commit)}, 1+rnd.IntN(12000))
				if err := b.Put([]byte(k), v); err != nil {
					return err
				}
				staged[k] = v
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range staged {
			if v == nil {
				delete(model, k)
			} else {
				model[k] = v
			}
		}
		if s.journal.epoch != epoch {
			epoch = s.journal.epoch
			if disk, err = os.ReadFile(path); err != nil {
				t.Fatal(err)
			}
		}
		if rnd.IntN(25) != 0 {
			continue
		}
		crashes++
		p := crashCopy(t, disk, path, -1)
		c, err := Open(p, syncedConfig(512<<10))
		if err != nil {
			t.Fatalf("commit %d: opening the crash copy: %v", commit, err)
		}
		err = c.view(func(tx *bbolt.Tx) error {
			for err := range tx.Check() {
				return fmt.Errorf("bbolt check: %w", err)
			}
			got := map[string][]byte{}
			if b := tx.Bucket(bucketDocs).Bucket([]byte("r")); b != nil {
				if err := b.ForEach(func(k, v []byte) error {
					got[string(k)] = bytes.Clone(v)
					return nil
				}); err != nil {
					return err
				}
			}
			if len(got) != len(model) {
				return fmt.Errorf("%d keys, want %d", len(got), len(model))
			}
			for k, v := range model {
				if !bytes.Equal(got[k], v) {
					return fmt.Errorf("key %s: %d bytes, want %d", k, len(got[k]), len(v))
				}
			}
			return nil
		})
		c.Close()
		if err != nil {
			t.Fatalf("commit %d (epoch %d), after the crash: %v", commit, epoch, err)
		}
	}
	if crashes < 5 || epoch < 10 {
		t.Fatalf("%d crashes over %d epochs: the test proves little", crashes, epoch)
	}
}

// TestJournalTornHeader: a journal whose header is not whole starts its
// epochs afresh, and the records left in the file from before it, though
// numbered and placed as the new ones would be, are not replayed.
func TestJournalTornHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	j, err := openJournal(path, 0o600, DefaultJournalSize, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"old r1", "old r2", "old r3"} {
		fakeCommit(t, j, s)
	}
	// The header torn, then the store opened again (nothing replayed:
	// the header is not whole) and synced, as at a checkpoint.
	if _, err := j.f.WriteAt(make([]byte, 16), 0); err != nil {
		t.Fatal(err)
	}
	if err := j.closeFiles(); err != nil {
		t.Fatal(err)
	}
	if j, err = openJournal(path, 0o600, DefaultJournalSize, 0); err != nil {
		t.Fatal(err)
	}
	disk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"new r1", "new r2"} {
		fakeCommit(t, j, s)
	}
	if got := crashPage5(t, j, disk, path); got != "new r2" {
		t.Fatalf("page 5 after replay holds %q, want %q", got, "new r2")
	}
}
