package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
	"go.uber.org/zap"

	"github.com/corehq/core/store"
)

var _ store.Store = (*Store)(nil)

// LockMode says whether writes of one record are serialised with lock
// documents (see doc.go, "Writes").
type LockMode int

const (
	// LocksAuto uses record locks when the server does not apply an update
	// to one document atomically (FerretDB reports itself in buildInfo).
	LocksAuto LockMode = iota
	// LocksOn always serialises the writes of one record.
	LocksOn
	// LocksOff never does: for servers with atomic document updates.
	LocksOff
)

// Config configures a Store.
type Config struct {
	// URI is the MongoDB connection string. Its path names the database
	// unless Database is set.
	URI string
	// Database is the database name; default: the URI's, else "core".
	Database string
	// WriteConcern is "majority" (the default), or a number of nodes that
	// must acknowledge each write ("1" for a standalone server that should
	// not wait for a journal).
	WriteConcern string
	// OpTimeout bounds each operation on the database (a Find reading many
	// records counts as one). Exceeding it is store.ErrUnavailable.
	OpTimeout time.Duration
	// ConnectTimeout bounds Open's first contact with the server, and how
	// long an operation waits for a reachable server.
	ConnectTimeout time.Duration
	// HopLimit bounds the sub-query of each reference hop in a filter
	// (store.ResolveHops).
	HopLimit int
	// MaxIndexes bounds the indexes Declare creates on the records
	// collection, which every instance shares (MongoDB allows 64 per
	// collection). Fields beyond it stay queryable, without an index.
	MaxIndexes int
	// RecordLocks: see LockMode.
	RecordLocks LockMode
	// LockLease is how long a record lock stays valid when its holder
	// vanishes without releasing it.
	LockLease time.Duration
	// Retention is how much of each instance's change feed is kept; the
	// zero value is store.DefaultRetention (changes.go).
	Retention store.Retention
	// PollInterval is how often a Wait looks for changes other processes
	// made (changes.go); at most 100 ms, default 50 ms.
	PollInterval time.Duration
	// Log receives what the store does in the background and no caller
	// sees fail: a usage $inc the server refused (usage.go). Nil: none.
	Log *zap.Logger

	// monitor sees every command the client sends (set by the tests of
	// this package, export_test.go).
	monitor *event.CommandMonitor
}

// DefaultConfig returns the configuration for uri: majority write concern,
// 10 s per operation, 5 s to reach a server, 10,000 records per hop, at
// most 48 record indexes, record locks where the server needs them.
func DefaultConfig(uri string) Config {
	return Config{
		URI:            uri,
		WriteConcern:   "majority",
		OpTimeout:      10 * time.Second,
		ConnectTimeout: 5 * time.Second,
		HopLimit:       10000,
		MaxIndexes:     48,
		LockLease:      10 * time.Second,
		Retention:      store.DefaultRetention(),
		PollInterval:   50 * time.Millisecond,
	}
}

// Collection names of the layout (doc.go).
const (
	collRecords = "records"
	collUniques = "uniques"
	collTypes   = "types"
	collDocs    = "docs"
	collLocks   = "locks"
	collUsage   = "usage"
	collHints   = "heads"
	// collChanges is in changes.go.
)

// Store is the MongoDB store. It is safe for concurrent use.
type Store struct {
	cfg    Config
	log    *zap.Logger
	client *mongo.Client
	db     *mongo.Database

	records, uniques, types, docs, locks, usage, changes, hints *mongo.Collection

	lockWrites bool        // serialise the writes of one record (LockMode)
	local      *keyedMutex // the same within this process

	mu       sync.RWMutex
	declared map[string]map[string]*typeState // instance → type → state
	indexes  map[string]bool                  // names of record indexes known to exist
	counted  map[string]bool                  // instances whose usage is known to be counted (usage.go)
	heads    map[string]uint64                // instance → the newest change Seq this process knows (changes.go)
	batches  map[string]*instBatches          // instance → its group commits of usage and changes (group.go)
	// instance → when this process takes care numbering its changes (changes.go)
	contention map[string]contention

	// The change feed (changes.go): the callers of Wait, a mutex per
	// instance for appending, and the poller, stopped by stop and done
	// when polled is closed.
	feed      store.Waiters
	feedLocks *keyedMutex
	stop      chan struct{}
	polled    chan struct{}
	closeOnce sync.Once
	// flushCtx is the context of the usage flushers' writes: cancelled
	// Config.OpTimeout after Close began, so that a flusher waiting for a
	// lock does not hold Close up until the lock expires.
	flushCtx    context.Context
	cancelFlush context.CancelFunc

	// The usage flushers (usage.go): closing is set, under mu, when Close
	// no longer lets a flusher start.
	closing  bool
	flushers sync.WaitGroup
}

// Open connects to the server, checks that it answers and creates the
// collections' fixed indexes. It fails with store.ErrUnavailable when no
// server answers within cfg.ConnectTimeout.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	def := DefaultConfig(cfg.URI)
	if cfg.WriteConcern == "" {
		cfg.WriteConcern = def.WriteConcern
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = def.OpTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = def.ConnectTimeout
	}
	if cfg.HopLimit <= 0 {
		cfg.HopLimit = def.HopLimit
	}
	if cfg.MaxIndexes <= 0 {
		cfg.MaxIndexes = def.MaxIndexes
	}
	if cfg.LockLease <= 0 {
		cfg.LockLease = def.LockLease
	}
	cfg.Retention = cfg.Retention.Normalized()
	if cfg.PollInterval <= 0 || cfg.PollInterval > 100*time.Millisecond {
		cfg.PollInterval = def.PollInterval
	}
	cs, err := connstring.ParseAndValidate(cfg.URI)
	if err != nil {
		// The driver's message may quote the URI, password included.
		return nil, errors.New("mongo: the connection string is not a valid MongoDB URI")
	}
	if cfg.Database == "" {
		cfg.Database = cs.Database
	}
	if cfg.Database == "" {
		cfg.Database = "core"
	}
	wc, err := parseWriteConcern(cfg.WriteConcern)
	if err != nil {
		return nil, err
	}
	opts := options.Client().ApplyURI(cfg.URI).
		SetWriteConcern(wc).
		SetConnectTimeout(cfg.ConnectTimeout).
		SetServerSelectionTimeout(cfg.ConnectTimeout).
		SetBSONOptions(&options.BSONOptions{DefaultDocumentMap: true})
	if cfg.monitor != nil {
		opts.SetMonitor(cfg.monitor)
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("mongo: connecting: %w", err)
	}
	db := client.Database(cfg.Database)
	s := &Store{
		cfg:      cfg,
		log:      cmp.Or(cfg.Log, zap.NewNop()),
		client:   client,
		db:       db,
		records:  db.Collection(collRecords),
		uniques:  db.Collection(collUniques),
		types:    db.Collection(collTypes),
		docs:     db.Collection(collDocs),
		locks:    db.Collection(collLocks),
		usage:    db.Collection(collUsage),
		changes:  db.Collection(collChanges),
		hints:    db.Collection(collHints),
		local:    newKeyedMutex(),
		declared: map[string]map[string]*typeState{},
		indexes:  map[string]bool{},
		counted:  map[string]bool{},
		heads:    map[string]uint64{},
		batches:  map[string]*instBatches{},

		contention: map[string]contention{},

		feedLocks: newKeyedMutex(),
		stop:      make(chan struct{}),
		polled:    make(chan struct{}),
	}
	s.flushCtx, s.cancelFlush = context.WithCancel(context.Background())
	if err := s.setup(ctx); err != nil {
		s.cancelFlush()
		_ = client.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	go s.pollChanges()
	return s, nil
}

// setup pings the server, decides on record locks and creates the fixed
// indexes.
func (s *Store) setup(ctx context.Context) error {
	octx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout+s.cfg.OpTimeout)
	defer cancel()
	if err := s.client.Ping(octx, readpref.Primary()); err != nil {
		return s.fail(ctx, "reaching the server", err)
	}
	switch s.cfg.RecordLocks {
	case LocksOn:
		s.lockWrites = true
	case LocksAuto:
		var info bson.M
		if err := s.db.RunCommand(octx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
			return s.fail(ctx, "reading buildInfo", err)
		}
		_, s.lockWrites = info["ferretdbVersion"]
	}
	for _, ix := range fixedIndexes {
		if _, err := s.db.Collection(ix.coll).Indexes().CreateOne(octx, mongo.IndexModel{
			Keys: ix.keys, Options: options.Index().SetName(ix.name),
		}); err != nil {
			return s.fail(ctx, "creating index "+ix.coll+"."+ix.name, err)
		}
	}
	specs, err := s.records.Indexes().ListSpecifications(octx)
	if err != nil {
		return s.fail(ctx, "listing indexes", err)
	}
	for _, sp := range specs {
		s.indexes[sp.Name] = true
	}
	return nil
}

// fixedIndexes are created at Open (doc.go, "Layout").
var fixedIndexes = []struct {
	coll, name string
	keys       bson.D
}{
	{collRecords, "i_t_id", bson.D{{Key: "i", Value: 1}, {Key: "t", Value: 1}, {Key: "id", Value: 1}}},
	{collUniques, "i_t_f", bson.D{{Key: "i", Value: 1}, {Key: "t", Value: 1}, {Key: "f", Value: 1}}},
	{collTypes, "i", bson.D{{Key: "i", Value: 1}}},
}

func parseWriteConcern(s string) (*writeconcern.WriteConcern, error) {
	if s == "majority" {
		return writeconcern.Majority(), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("mongo: write concern %q is neither \"majority\" nor a number of nodes", s)
	}
	return &writeconcern.WriteConcern{W: n}, nil
}

// Ping reports whether the server answers, within the operation time-out.
func (s *Store) Ping(ctx context.Context) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	if err := s.client.Ping(octx, readpref.Primary()); err != nil {
		return s.fail(ctx, "ping", err)
	}
	return nil
}

// Close disconnects from the server.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.stop) })
	<-s.polled
	// The usage flushers write what is open once more (a failure is not
	// tried again once stop is closed), all within Config.OpTimeout.
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	t := time.AfterFunc(s.cfg.OpTimeout, s.cancelFlush)
	s.flushers.Wait()
	t.Stop()
	s.cancelFlush()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.OpTimeout)
	defer cancel()
	return s.client.Disconnect(ctx)
}

// Database is the database the store keeps its collections in.
func (s *Store) Database() string { return s.cfg.Database }

// op derives the context of one database operation: the caller's, bounded
// by the operation time-out.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.OpTimeout)
}

// fail translates a driver error into a store error: the caller's own
// cancellation stays as it is; an unreachable server, a network failure or
// an operation time-out is store.ErrUnavailable. The driver's text is kept
// behind %w for logs; it never names the URI's password.
func (s *Store) fail(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("mongo: %s: %w", what, ctx.Err())
	}
	if unavailable(err) {
		return fmt.Errorf("mongo: %s: %w: %w", what, store.ErrUnavailable, err)
	}
	return fmt.Errorf("mongo: %s: %w", what, err)
}

// unavailable reports errors that mean "the database cannot be reached",
// among them a connection pool the driver cleared because another
// operation's connection failed (the usage flusher's, say) just before.
func unavailable(err error) bool {
	var sel topology.ServerSelectionError
	var cleared driver.RetryablePoolError
	return mongo.IsNetworkError(err) || mongo.IsTimeout(err) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, mongo.ErrClientDisconnected) ||
		errors.As(err, &sel) || errors.As(err, &cleared)
}
