package mongo

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// lockRecord serialises the writes of one record. Within the process a
// keyed mutex does it; across processes, when the server does not apply an
// update to one document atomically, a lock document in the locks
// collection does: inserting it is atomic (its _id is the record's), and
// it carries an expiry so that a holder that vanished does not block the
// record past LockLease. On MongoDB proper (LocksOff, or LocksAuto) only
// the keyed mutex is used.
//
// Why FerretDB (v1) keeps it for every write of an existing record: its
// update and findAndModify read the document, apply the operators in
// FerretDB, and write the whole document back with an UPDATE that names
// only the _id (internal/handler/msg_update.go, and UpdateAll of its
// SQLite backend). Two concurrent $set of different fields of one record
// can therefore lose one: with the locks off, the two-process case of
// TestConcurrentUpserts (100 upserts of one id, each setting a field of
// its own) ended with 81 to 97 of the fields. For the same reason a
// version condition in the filter is no compare-and-swap there, and a
// delete can land between an update's read and its write. A create of a
// new id (store.Op.New) takes no lock document (create, write.go): it is
// an insert, which the _id index makes atomic, of an id no one else
// knows. The usage document's updates take a lock document of their own,
// once per flush of an instance's usage (lockUsage, usage.go).
//
// The returned function releases the lock.
func (s *Store) lockRecord(ctx context.Context, key string) (func(), error) {
	unlockLocal, err := s.local.lock(ctx, key)
	if err != nil {
		return nil, err
	}
	if !s.lockWrites {
		return unlockLocal, nil
	}
	wait := time.Millisecond
	for {
		exp := time.Now().Add(s.cfg.LockLease)
		octx, cancel := s.op(ctx)
		_, err := s.locks.InsertOne(octx, bson.D{{Key: "_id", Value: key}, {Key: "exp", Value: dateOf(exp)}})
		cancel()
		if err == nil {
			return func() {
				octx, cancel := s.op(context.WithoutCancel(ctx))
				defer cancel()
				_, _ = s.locks.DeleteOne(octx, bson.D{{Key: "_id", Value: key}, {Key: "exp", Value: dateOf(exp)}})
				unlockLocal()
			}, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			unlockLocal()
			return nil, s.fail(ctx, "locking a record", err)
		}
		if err := s.breakExpiredLock(ctx, key); err != nil {
			unlockLocal()
			return nil, err
		}
		select {
		case <-ctx.Done():
			unlockLocal()
			return nil, ctx.Err()
		case <-time.After(wait + rand.N(wait)):
		}
		wait = min(2*wait, maxLockWait)
	}
}

// maxLockWait bounds the pause between two tries of a taken lock
// document. A lock is held for a write or two (a record's update, a
// flush of an instance's usage), and since the writes of an instance in
// one process share their usage flush (group.go), a usage lock has at
// most one contender per process: a longer pause only leaves the lock
// free. With 50 ms, two processes on FerretDB over PostgreSQL made 596
// creates and 176 updates a second together; with 4 ms, 724 and 266
// (corebench --ferretdb --ferretdb-postgresql --processes 2; one run
// each).
const maxLockWait = 4 * time.Millisecond

// breakExpiredLock removes the lock of key if its lease ran out.
func (s *Store) breakExpiredLock(ctx context.Context, key string) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	var l struct {
		Exp bson.DateTime `bson:"exp"`
	}
	err := s.locks.FindOne(octx, bson.D{{Key: "_id", Value: key}}).Decode(&l)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return s.fail(ctx, "reading a record lock", err)
	}
	if l.Exp.Time().After(time.Now()) {
		return nil
	}
	_, err = s.locks.DeleteOne(octx, bson.D{{Key: "_id", Value: key}, {Key: "exp", Value: l.Exp}})
	return s.fail(ctx, "breaking an expired record lock", err)
}

// keyedMutex is a set of mutexes by key, created on demand and dropped when
// no one holds or waits for them.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	ch   chan struct{} // holds one token while locked
	refs int
}

func newKeyedMutex() *keyedMutex { return &keyedMutex{m: map[string]*keyLock{}} }

// lock locks key, or fails when ctx ends first.
func (k *keyedMutex) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	l := k.m[key]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		k.m[key] = l
	}
	l.refs++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
