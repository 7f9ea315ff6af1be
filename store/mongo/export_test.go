package mongo

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/corehq/core/store"
)

// AggregateReport is Aggregate that also reports whether the server
// grouped, for the tests of package mongo_test.
func (s *Store) AggregateReport(ctx context.Context, inst string, q *store.AggQuery) ([]*store.Group, bool, error) {
	return s.aggregate(ctx, inst, q)
}

// ForgetUsage removes the instance's kept records and size (not its
// counters), in the database and in this process's memory, as in a
// database written before usage was kept.
func (s *Store) ForgetUsage(ctx context.Context, inst string) error {
	if err := s.settleUsage(ctx, inst); err != nil {
		return err
	}
	_, err := s.usage.UpdateOne(ctx, bson.D{{Key: "_id", Value: inst}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: uRecords, Value: ""}, {Key: uBytes, Value: ""}}}})
	s.mu.Lock()
	delete(s.counted, inst)
	s.mu.Unlock()
	return err
}

// SettleUsage waits until this process has written what its Writes of
// the instance added to its usage (their $inc is not waited for).
func (s *Store) SettleUsage(ctx context.Context, inst string) error {
	return s.settleUsage(ctx, inst)
}

// Contended reports whether the store takes care numbering the
// instance's changes (changes.go, "Fairness").
func (s *Store) Contended(inst string) bool { return s.contended(inst) }

// StampContention stamps the instance's heads document as a process that
// lost one of its change numbers does.
func (s *Store) StampContention(ctx context.Context, inst string) { s.stampContention(ctx, inst) }

// ContentionStamped reports whether the instance's heads document holds
// a contention stamp.
func (s *Store) ContentionStamped(ctx context.Context, inst string) (bool, error) {
	var d struct {
		C int64 `bson:"c"`
	}
	err := s.hints.FindOne(ctx, bson.D{{Key: "_id", Value: inst}}).Decode(&d)
	return d.C > 0, err
}

// WithCommandMonitor makes the store's client report every command it
// sends to m, for tests that read what reaches the server.
func WithCommandMonitor(m *event.CommandMonitor) func(*Config) {
	return func(c *Config) { c.monitor = m }
}

// DropBatch is how many documents one step of a drop deletes.
const DropBatch = dropBatch
