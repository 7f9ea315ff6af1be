package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/corehq/core/store"
)

var _ store.Store = (*Store)(nil)

// Config configures a Store.
type Config struct {
	// HopLimit bounds the sub-query of each reference hop in a filter
	// (store.ResolveHops): a hop matching more target records fails with
	// store.ErrTooMany.
	HopLimit int
	// OpenTimeout is how long Open waits for the file lock that another
	// process may hold. Zero waits forever.
	OpenTimeout time.Duration
	// NoSync skips the fsync after each commit: much faster writes, but a
	// crash of the machine may lose the last ones. For tests and bulk loads.
	NoSync bool
	// JournalSize bounds the journal that synced commits go through
	// (journal.go): when the next commit would not fit, the file is synced
	// and the journal starts again. Zero is DefaultJournalSize.
	JournalSize int64
	// BatchSize is the most writes one transaction commits. Writes that
	// arrive while a transaction commits share the next one (group commit).
	BatchSize int
	// CommitWait bounds how long a transaction waits for writers the last
	// one saw before it commits with fewer than three quarters of them
	// (commit.go); it never waits longer than the last commit took. A
	// lone writer never waits. Zero is the default, 1 ms; negative never
	// waits.
	CommitWait time.Duration
	// FileMode is the mode of a newly created file.
	FileMode os.FileMode
	// Retention is how much of each instance's change feed is kept; the
	// zero value is store.DefaultRetention (changes.go).
	Retention store.Retention
}

// DefaultConfig returns the configuration for a data directory: 10,000
// records per hop, a 5 s lock wait, synced commits, up to 1,000 writes per
// transaction, at most 1 ms of waiting for expected writers, and a file
// only its owner can read.
func DefaultConfig() Config {
	return Config{
		HopLimit:    10000,
		OpenTimeout: 5 * time.Second,
		BatchSize:   1000,
		CommitWait:  time.Millisecond,
		FileMode:    0o600,
	}
}

// Store is the embedded store: one bbolt file, laid out as the package
// documentation describes. It is safe for concurrent use.
type Store struct {
	db      *bbolt.DB
	journal *journal // nil with Config.NoSync (journal.go)
	cfg     Config

	// Writes go to the committer goroutine (commit.go) through calls;
	// closed stops it, and done is closed when it has stopped. sending
	// counts the writes on their way into calls.
	calls     chan *call
	sending   atomic.Int64
	closed    chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error

	// states caches each instance's declared types and indexes, validated
	// against the instance's generation number in every transaction.
	mu     sync.RWMutex
	states map[string]*instState

	hints planHints     // hints.go
	ids   idCache       // idcache.go
	feed  store.Waiters // the callers of Wait (changes.go)
}

// Bucket and key names of the layout (doc.go).
var (
	bucketMeta  = []byte("meta")
	bucketDocs  = []byte("docs")
	bucketInst  = []byte("inst")
	bucketSpec  = []byte("spec")
	bucketRec   = []byte("rec")
	bucketIdx   = []byte("idx")
	bucketCount = []byte("count")
	// bucketTrashed holds, per type, the number of its trashed records,
	// once declareType has counted them (aggregate_index.go reads it).
	bucketTrashed = []byte("trashed")
	keyVersion    = []byte("version")
	keyGen        = []byte("gen")
)

// layoutVersion is the on-disk layout this code reads and writes.
const layoutVersion = 1

// Open opens or creates the store file at path.
func Open(path string, cfg Config) (*Store, error) {
	if cfg.HopLimit <= 0 {
		cfg.HopLimit = DefaultConfig().HopLimit
	}
	if cfg.FileMode == 0 {
		cfg.FileMode = DefaultConfig().FileMode
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultConfig().BatchSize
	}
	if cfg.CommitWait == 0 {
		cfg.CommitWait = DefaultConfig().CommitWait
	}
	if cfg.JournalSize <= 0 {
		cfg.JournalSize = DefaultJournalSize
	}
	cfg.Retention = cfg.Retention.Normalized()
	var j *journal
	if !cfg.NoSync {
		var err error
		if j, err = openJournal(path, cfg.FileMode, cfg.JournalSize, cfg.OpenTimeout); err != nil {
			return nil, fmt.Errorf("bolt: open %s: %w", path, err)
		}
	}
	db, err := bbolt.Open(path, cfg.FileMode, &bbolt.Options{
		Timeout: cfg.OpenTimeout,
		// The freelist is rebuilt on open instead of written on every
		// commit, and kept as a map: both make writes cheaper on large files.
		NoFreelistSync: true,
		FreelistType:   bbolt.FreelistMapType,
	})
	if err != nil {
		if j != nil {
			j.closeFiles()
		}
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("bolt: open %s: file locked by another process: %w", path, store.ErrUnavailable)
		}
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	db.NoSync = cfg.NoSync
	if j != nil {
		// The journal syncs instead (journal.go).
		db.NoSync = true
		j.metaEnd = 2 * int64(db.Info().PageSize)
		if err := hookWrites(db, j.writeAt); err != nil {
			db.Close()
			j.closeFiles()
			return nil, err
		}
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if v := meta.Get(keyVersion); v != nil {
			if got := binary.BigEndian.Uint64(v); got != layoutVersion {
				return fmt.Errorf("bolt: %s has layout version %d, this build reads %d", path, got, layoutVersion)
			}
		} else if err := meta.Put(keyVersion, u64(layoutVersion)); err != nil {
			return err
		}
		for _, b := range [][]byte{bucketDocs, bucketInst} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		if j != nil {
			j.closeFiles()
		}
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	s := &Store{
		db:      db,
		journal: j,
		cfg:     cfg,
		states:  make(map[string]*instState),
		calls:   make(chan *call),
		closed:  make(chan struct{}),
		done:    make(chan struct{}),
	}
	go s.commitLoop()
	return s, nil
}

// Ping reports whether the file is open.
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.view(func(tx *bbolt.Tx) error { return nil })
}

// Close waits for the writes in progress, then closes the file. Calls
// after Close fail with store.ErrUnavailable; closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		<-s.done
		s.closeErr = s.db.Close()
		if s.journal != nil {
			s.closeErr = errors.Join(s.closeErr, s.journal.close())
		}
	})
	return s.closeErr
}

// view runs fn in a read transaction, translating bbolt's errors.
func (s *Store) view(fn func(*bbolt.Tx) error) error {
	return translate(s.db.View(fn))
}

// translate turns bbolt's errors into store errors.
func translate(err error) error {
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) || errors.Is(err, bolterrors.ErrTxClosed) {
		return fmt.Errorf("bolt: %w", store.ErrUnavailable)
	}
	return err
}

func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// bucketIn returns the bucket name in b, creating it if it is missing.
// It is CreateBucketIfNotExists without its copy of the name when the
// bucket is open already in the transaction, as it is for every write of a
// group commit after the first.
func bucketIn(b *bbolt.Bucket, name []byte) (*bbolt.Bucket, error) {
	if c := b.Bucket(name); c != nil {
		return c, nil
	}
	return b.CreateBucketIfNotExists(name)
}

// instBucket is the bucket of an instance, or nil.
func instBucket(tx *bbolt.Tx, inst string) *bbolt.Bucket {
	return tx.Bucket(bucketInst).Bucket([]byte(inst))
}

// recBucket is the bucket of the records of one type, or nil.
func recBucket(ib *bbolt.Bucket, typ string) *bbolt.Bucket {
	if ib == nil {
		return nil
	}
	rb := ib.Bucket(bucketRec)
	if rb == nil {
		return nil
	}
	return rb.Bucket([]byte(typ))
}

// idxBucket is the bucket of one index of a type, or nil.
func idxBucket(ib *bbolt.Bucket, typ, name string) *bbolt.Bucket {
	if ib == nil {
		return nil
	}
	xb := ib.Bucket(bucketIdx)
	if xb == nil {
		return nil
	}
	tb := xb.Bucket([]byte(typ))
	if tb == nil {
		return nil
	}
	return tb.Bucket([]byte(name))
}

// checkInst rejects an empty instance id: it would be a bucket name bbolt
// refuses, and is a caller's bug.
func checkInst(inst string) error {
	if inst == "" {
		return errors.New("bolt: empty instance id")
	}
	return nil
}
