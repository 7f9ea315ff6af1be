package mongo_test

import (
	"context"
	"os"
	"testing"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(mongotest.Main(m)) }

// hopLimit is small so that the suite can check the bound of reference
// hops.
const hopLimit = 20

// TestConformance runs the store suite, its atomicity cases included: the
// failures they provoke (a taken unique value, a missing required field)
// are caught before any op applies. Concurrent writers can defeat that
// (see Write), which the suite does not provoke.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.RunWith(t, func(t *testing.T) store.Store {
		return mongotest.Open(t, func(c *mongo.Config) { c.HopLimit = hopLimit })
	}, storetest.Options{HopLimit: hopLimit, Reopen: reopen,
		ForgetUsage: func(t *testing.T, s store.Store, inst string) {
			if err := s.(*mongo.Store).ForgetUsage(context.Background(), inst); err != nil {
				t.Fatal(err)
			}
		},
		OpenRetention: func(t *testing.T, r store.Retention) store.Store {
			return mongotest.Open(t, func(c *mongo.Config) { c.HopLimit = hopLimit; c.Retention = r })
		},
		SecondHandle: func(t *testing.T, s store.Store) store.Store {
			cfg := mongotest.Config(mongotest.URI(t), s.(*mongo.Store).Database())
			cfg.HopLimit = hopLimit
			n, err := mongo.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { n.Close() })
			return n
		}})
}

// reopen closes s and opens its database again.
func reopen(t *testing.T, s store.Store) store.Store {
	t.Helper()
	db := s.(*mongo.Store).Database()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := mongotest.Config(mongotest.URI(t), db)
	cfg.HopLimit = hopLimit
	n, err := mongo.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestContentsConformance(t *testing.T) {
	t.Parallel()
	storetest.RunContents(t, func(t *testing.T) store.Store { return mongotest.Open(t) })
}
