package mongo_test

import (
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
	}, storetest.Options{HopLimit: hopLimit})
}
