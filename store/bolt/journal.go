package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"go.etcd.io/bbolt"
)

// The journal. bbolt commits a transaction by writing each of its dirty
// pages in place, wherever the free list put it, syncing the file, then
// writing the meta page and syncing again. Under load a group commit
// dirties 45-95 pages scattered over the file, and on the test host
// writing and syncing them cost 0.7-1.1 ms a commit and most of a write's
// system CPU, where one contiguous write of as many pages and its sync
// cost 0.2 ms (docs/benchmarks.md, "the journal, on a faster host").
//
// So, with synced commits, the Store runs bbolt without syncs and takes
// over its page writes (journal.writeAt): a commit's pages and its meta
// page go first to the journal, the file core.db-journal beside the
// store's, as one record written at once and synced; then they are
// written in place, unsynced; then bbolt's commit returns and the writes
// it carried are acknowledged. Opening the store replays the journal's
// records, in order, into the file and syncs it, so a crash of the machine
// loses none of what the journal holds, whichever of the unsynced in-place
// writes reached the disk, whole or torn:
//   - bbolt never writes over a page the last committed state uses (it
//     copies on write), so an in-place write of a commit whose record did
//     not make it touches only pages no committed state needs;
//   - every page written in place since the last checkpoint, the meta
//     pages included, is in a record, and replay writes them again in
//     their commit order, ending with the last whole record's meta page.
//
// A checkpoint syncs the file, after which the journal's records are no
// longer needed: it starts a new epoch, written and synced into the
// journal's header block, and records are written from the start again.
// Replay takes only the records of the header's epoch, numbered on from 1
// and whole (their CRC-32C), and stops at the first that is not, so a
// record of an older epoch is never replayed, and neither is a torn one,
// whose commit was not acknowledged. A checkpoint happens when the next
// record would not fit in Config.JournalSize, and at Close. A commit larger
// than the journal checkpoints, then writes in place as bbolt would:
// pages, sync, meta page, sync.
//
// A commit whose record is synced but whose in-place writes then fail
// (the disk) returns the error, and is replayed at the next open all the
// same: as with bbolt's own failed sync, an error says the commit may or
// may not be there.
//
// Outside a commit bbolt writes pages only when it creates a file, before
// the hook is set, and it syncs growths of the file itself.
// The hook is set on bbolt's unexported DB.ops.writeAt (hookWrites), the
// one function every page write goes through; a bbolt whose DB has no
// such field fails Open, so an upgrade that moves it cannot go unnoticed.
type journal struct {
	f, db    *os.File // the journal; the store's file, our own descriptor
	capacity int64    // the journal's largest size
	metaEnd  int64    // writes below this offset are meta pages: a commit's last write
	epoch    uint64   // the header's epoch: the records being written belong to it
	seq      uint64   // the number of the last record of this epoch
	pos      int64    // where the next record goes

	// The commit under way: where each of its writes goes, and their
	// bytes, in the order bbolt wrote them.
	writes []pageWrite
	data   []byte
	table  []byte // the record's header and table, built at the commit's end

	fill journalFill // the zeros written ahead of the records (journal_fill.go)
}

// pageWrite is one write of a commit: len bytes at off in the file, from
// start in journal.data.
type pageWrite struct {
	off        int64
	start, len int
}

const (
	// DefaultJournalSize is the journal's largest size (Config.JournalSize):
	// about 200 group commits of creates between checkpoints.
	DefaultJournalSize = 64 << 20
	// journalBlock is the journal's unit: its header block, and the
	// alignment of records and their page data.
	journalBlock = 4096
	// recordFixed is a record's fixed header: magic, epoch, seq, the
	// number of writes, the length of its data, then its CRC; the table
	// follows, one (offset, length) per write.
	recordFixed = 8 + 8 + 8 + 4 + 8 + 4
	tableEntry  = 8 + 4
	// keptBuffer is the most memory a commit's copy of its pages keeps
	// for the next commit: a group commit of creates is about 200 KiB.
	keptBuffer = 4 << 20
)

var (
	journalMagic = [8]byte{'c', 'o', 'r', 'e', 'j', 'n', 'l', 1}
	recordMagic  = [8]byte{'c', 'o', 'r', 'e', 'r', 'e', 'c', 1}
	castagnoli   = crc32.MakeTable(crc32.Castagnoli)
)

// journalPath is the journal of the store file at path.
func journalPath(path string) string { return path + "-journal" }

// openJournal opens (or creates) the journal of the store file at path,
// replays its records into the file and starts a new epoch. It runs
// before bbolt opens the file, holding the journal's lock (lockFile), so
// that no other process replays or writes it meanwhile.
func openJournal(path string, mode os.FileMode, capacity int64, timeout time.Duration) (*journal, error) {
	jp := journalPath(path)
	_, statErr := os.Stat(jp)
	created := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(jp, os.O_RDWR|os.O_CREATE, mode)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, timeout); err != nil {
		f.Close()
		return nil, err
	}
	db, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, mode)
	if err != nil {
		f.Close()
		return nil, err
	}
	// Without a whole header to go on, the epochs start from the clock,
	// so that records left in the file from before never pass for this
	// epoch's (the header only moves forward from here).
	j := &journal{f: f, db: db, capacity: capacity, epoch: uint64(time.Now().UnixNano())}
	if err := j.replayInto(); err != nil {
		j.closeFiles()
		return nil, fmt.Errorf("replaying the journal %s: %w", jp, err)
	}
	if err := j.newEpoch(); err != nil {
		j.closeFiles()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		j.closeFiles()
		return nil, err
	}
	j.initFill(st.Size())
	if created {
		// The journal's name must survive a crash too.
		if err := syncDir(filepath.Dir(jp)); err != nil {
			j.closeFiles()
			return nil, err
		}
	}
	return j, nil
}

// replayInto replays the journal into the store's file, unless that file
// is empty: bbolt syncs a new file's first pages before any commit, so an
// empty file is one made anew (its old self deleted), and the records are
// of a file that is gone.
func (j *journal) replayInto() error {
	st, err := j.db.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	return j.replay()
}

// replay writes the records of the header's epoch into the store's file,
// in order, and syncs it; it stops at the first record that is missing,
// of another epoch, out of sequence or not whole.
func (j *journal) replay() error {
	var head [journalBlock]byte
	if _, err := j.f.ReadAt(head[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // new, or never got past its header
		}
		return err
	}
	epoch, ok := readHeader(head[:])
	if !ok {
		return nil // a header never written whole: no record was synced after it
	}
	j.epoch = epoch
	size, err := j.f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	applied := 0
	for pos, seq := int64(journalBlock), uint64(1); ; seq++ {
		next, writes, data, ok := j.readRecord(pos, size, epoch, seq)
		if !ok {
			break
		}
		for _, w := range writes {
			if _, err := j.db.WriteAt(data[w.start:w.start+w.len], w.off); err != nil {
				return err
			}
		}
		applied++
		pos = next
	}
	if applied == 0 {
		return nil
	}
	return syncData(j.db)
}

// readRecord reads the record at pos, if it is the seq-th of epoch and
// whole: its writes, their data, and where the next record begins.
func (j *journal) readRecord(pos, size int64, epoch, seq uint64) (next int64, writes []pageWrite, data []byte, ok bool) {
	var fixed [recordFixed]byte
	if pos+recordFixed > size {
		return 0, nil, nil, false
	}
	if _, err := j.f.ReadAt(fixed[:], pos); err != nil {
		return 0, nil, nil, false
	}
	if [8]byte(fixed[:8]) != recordMagic || binary.LittleEndian.Uint64(fixed[8:]) != epoch || binary.LittleEndian.Uint64(fixed[16:]) != seq {
		return 0, nil, nil, false
	}
	n := int64(binary.LittleEndian.Uint32(fixed[24:]))
	dataLen := int64(binary.LittleEndian.Uint64(fixed[28:]))
	sum := binary.LittleEndian.Uint32(fixed[36:])
	tableLen := roundBlock(recordFixed + n*tableEntry)
	if n == 0 || dataLen <= 0 || pos+tableLen+dataLen > size {
		return 0, nil, nil, false
	}
	rec := make([]byte, tableLen+dataLen)
	if _, err := j.f.ReadAt(rec, pos); err != nil {
		return 0, nil, nil, false
	}
	crc := crc32.Update(crc32.Checksum(rec[:recordFixed-4], castagnoli), castagnoli, rec[recordFixed:])
	if crc != sum {
		return 0, nil, nil, false
	}
	data = rec[tableLen:]
	start := 0
	for i := range n {
		e := rec[recordFixed+i*tableEntry:]
		w := pageWrite{off: int64(binary.LittleEndian.Uint64(e)), start: start, len: int(binary.LittleEndian.Uint32(e[8:]))}
		if w.off < 0 || w.len <= 0 || int64(start+w.len) > dataLen {
			return 0, nil, nil, false
		}
		writes = append(writes, w)
		start += w.len
	}
	return pos + tableLen + roundBlock(dataLen), writes, data, true
}

// readHeader returns the epoch of a header block, if it is whole.
func readHeader(b []byte) (epoch uint64, ok bool) {
	if [8]byte(b[:8]) != journalMagic {
		return 0, false
	}
	if crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[8:]), true
}

// newEpoch makes the journal's records void: the store's file must hold
// them already (synced). It writes and syncs a header of the next epoch.
func (j *journal) newEpoch() error {
	j.epoch++
	var head [journalBlock]byte
	copy(head[:], journalMagic[:])
	binary.LittleEndian.PutUint64(head[8:], j.epoch)
	binary.LittleEndian.PutUint32(head[16:], crc32.Checksum(head[:16], castagnoli))
	if _, err := j.f.WriteAt(head[:], 0); err != nil {
		return err
	}
	if err := syncData(j.f); err != nil {
		return err
	}
	j.seq, j.pos = 0, journalBlock
	return nil
}

// checkpoint syncs the store's file and starts a new epoch.
func (j *journal) checkpoint() error {
	if err := syncData(j.db); err != nil {
		return err
	}
	return j.newEpoch()
}

// writeAt is bbolt's page write (see above). A write below metaEnd is the
// meta page, the last write of a commit: the commit's record is written
// and synced, then its pages are written in place.
func (j *journal) writeAt(b []byte, off int64) (int, error) {
	j.writes = append(j.writes, pageWrite{off: off, start: len(j.data), len: len(b)})
	j.data = append(j.data, b...)
	if off >= j.metaEnd {
		return len(b), nil
	}
	err := j.commit()
	j.writes, j.data = j.writes[:0], j.data[:0]
	if cap(j.data) > keptBuffer {
		// A large commit (an import, an index build) does not keep its
		// memory for the life of the store.
		j.writes, j.data, j.table = nil, nil, nil
	}
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// commit journals the commit under way and writes it in place.
func (j *journal) commit() error {
	tableLen := roundBlock(recordFixed + int64(len(j.writes))*tableEntry)
	size := tableLen + roundBlock(int64(len(j.data)))
	if j.pos+size > j.capacity {
		if err := j.checkpoint(); err != nil {
			return err
		}
		if journalBlock+size > j.capacity {
			return j.writeSynced()
		}
	}
	j.seq++
	t := slices.Grow(j.table[:0], int(tableLen))[:tableLen]
	clear(t)
	copy(t, recordMagic[:])
	binary.LittleEndian.PutUint64(t[8:], j.epoch)
	binary.LittleEndian.PutUint64(t[16:], j.seq)
	binary.LittleEndian.PutUint32(t[24:], uint32(len(j.writes)))
	binary.LittleEndian.PutUint64(t[28:], uint64(len(j.data)))
	for i, w := range j.writes {
		e := t[recordFixed+i*tableEntry:]
		binary.LittleEndian.PutUint64(e, uint64(w.off))
		binary.LittleEndian.PutUint32(e[8:], uint32(w.len))
	}
	crc := crc32.Update(crc32.Checksum(t[:recordFixed-4], castagnoli), castagnoli, t[recordFixed:])
	binary.LittleEndian.PutUint32(t[recordFixed-4:], crc32.Update(crc, castagnoli, j.data))
	j.table = t
	j.claim(j.pos + size)
	if _, err := j.f.WriteAt(t, j.pos); err != nil {
		return err
	}
	if _, err := j.f.WriteAt(j.data, j.pos+tableLen); err != nil {
		return err
	}
	if err := syncData(j.f); err != nil {
		return err
	}
	j.pos += size
	return j.writeInPlace(j.writes)
}

// writeInPlace writes a commit's pages into the store's file, unsynced,
// joining writes that follow one another in the file into one.
func (j *journal) writeInPlace(writes []pageWrite) error {
	for i := 0; i < len(writes); {
		w := writes[i]
		k := i + 1
		for ; k < len(writes) && writes[k].off == w.off+int64(w.len) && writes[k].start == w.start+w.len; k++ {
			w.len += writes[k].len
		}
		if _, err := j.db.WriteAt(j.data[w.start:w.start+w.len], w.off); err != nil {
			return err
		}
		i = k
	}
	return nil
}

// writeSynced writes a commit too large for the journal as bbolt would:
// its pages, a sync, its meta page (the last write), a sync. The journal
// was checkpointed just before, so it holds nothing to replay over it.
func (j *journal) writeSynced() error {
	last := len(j.writes) - 1
	if err := j.writeInPlace(j.writes[:last]); err != nil {
		return err
	}
	if err := syncData(j.db); err != nil {
		return err
	}
	if err := j.writeInPlace(j.writes[last:]); err != nil {
		return err
	}
	return syncData(j.db)
}

// close checkpoints the journal, so that the next Open has nothing to
// replay, and closes its files.
func (j *journal) close() error {
	j.stopFill()
	err := j.checkpoint()
	return errors.Join(err, j.closeFiles())
}

func (j *journal) closeFiles() error {
	j.stopFill()
	return errors.Join(j.f.Close(), j.db.Close())
}

func roundBlock(n int64) int64 { return (n + journalBlock - 1) / journalBlock * journalBlock }

// errNoHook is Open's error with a bbolt whose page writes cannot be
// taken over.
var errNoHook = errors.New("bolt: this bbolt has no DB.ops.writeAt to journal its page writes through (journal.go)")

// hookWrites makes fn bbolt's page write: it sets the unexported
// DB.ops.writeAt, the function tx.write and tx.writeMeta write every page
// with. It must be called before the first write transaction.
func hookWrites(db *bbolt.DB, fn func([]byte, int64) (int, error)) error {
	ops := reflect.ValueOf(db).Elem().FieldByName("ops")
	if !ops.IsValid() || ops.Kind() != reflect.Struct {
		return errNoHook
	}
	w := ops.FieldByName("writeAt")
	if !w.IsValid() || w.Type() != reflect.TypeOf(fn) {
		return errNoHook
	}
	reflect.NewAt(w.Type(), unsafe.Pointer(w.UnsafeAddr())).Elem().Set(reflect.ValueOf(fn))
	return nil
}
