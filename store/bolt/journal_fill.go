package bolt

import "sync"

// The journal's fill. A record written past the journal's end of file, or
// over blocks never written, makes the file system allocate its blocks
// and record the file's new size, and the record's sync then commits that
// too: on the test hosts such a write and sync of 200 KiB cost 250-316 µs,
// against 150-160 µs over blocks written before (fallocate'd blocks cost
// as much as new ones: they are marked unwritten until written). A store's
// first JournalSize of records would all pay it, and a commit waits for
// its sync.
//
// So once the journal has been written past fillAfter of its capacity (a
// store taking writes in earnest; most stores of the tests never get
// there), a goroutine writes the rest of it with zeros, fillChunk at a
// time, each synced on its own, as PostgreSQL fills a new WAL segment.
// From then on every record overwrites written blocks, as it does anyway
// once the journal has wrapped. Zeros are never a record (replay needs a
// record's magic, epoch, number and CRC), so a crash during the fill
// replays what it would have without it.
//
// The filler and the records never write over each other: the filler
// writes a chunk only past filled, holding fill.mu, and a record whose
// end is past what the committer last saw of filled takes fill.mu to move
// filled past itself before it is written. The fill only saves time: a
// failed write or sync of a chunk ends it, leaving the rest to the
// records, as before.
type journalFill struct {
	mu     sync.Mutex
	filled int64 // under mu: the filler writes nothing below it (a record or the filler wrote it, or a record is being written there)

	seen    int64 // the committer's last look at filled, a bound below it
	started bool  // the committer started the filler
	stopped bool  // stopFill ran: no filler starts again
	stop    chan struct{}
	done    chan struct{}
}

const (
	// fillChunk is how much the filler writes and syncs at a time: a
	// commit whose sync comes while a chunk is written waits for at most
	// that much more.
	fillChunk = 1 << 20
	// fillAfter is the part of the journal's capacity that records must
	// have passed for the filler to start.
	fillAfter = 16
)

// initFill sets up the fill of a journal whose file is size bytes long.
func (j *journal) initFill(size int64) {
	j.fill = journalFill{filled: size, seen: size, stop: make(chan struct{}), done: make(chan struct{})}
}

// claim is called by the committer before it writes a record that ends at
// end; it returns once the filler cannot write over that record, and
// starts the filler when it is due.
func (j *journal) claim(end int64) {
	f := &j.fill
	if end <= f.seen {
		return
	}
	f.mu.Lock()
	f.filled = max(f.filled, end)
	f.seen = f.filled
	f.mu.Unlock()
	if !f.started && !f.stopped && end > j.capacity/fillAfter && f.seen < j.capacity {
		f.started = true
		go j.fillRest()
	}
}

// fillRest is the filler goroutine: it writes zeros from filled to the
// journal's capacity, a synced chunk at a time, until it is done, a write
// or sync fails, or the journal closes.
func (j *journal) fillRest() {
	f := &j.fill
	defer close(f.done)
	zero := make([]byte, fillChunk)
	for {
		select {
		case <-f.stop:
			return
		default:
		}
		f.mu.Lock()
		off := f.filled
		n := min(int64(fillChunk), j.capacity-off)
		if n <= 0 {
			f.mu.Unlock()
			return
		}
		_, err := j.f.WriteAt(zero[:n], off)
		if err == nil {
			f.filled = off + n
		}
		f.mu.Unlock()
		if err != nil || syncData(j.f) != nil {
			return
		}
	}
}

// stopFill ends the filler, if it was started, and waits for it.
func (j *journal) stopFill() {
	f := &j.fill
	if f.started && !f.stopped {
		close(f.stop)
		<-f.done
	}
	f.stopped = true
}
