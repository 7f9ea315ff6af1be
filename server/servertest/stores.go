package servertest

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/store/mongo/mongotest"
)

// The store a test server runs on. A test chooses one with WithStore;
// otherwise the binary's current kind decides: bolt, or MongoDB (the
// server of store/mongo/mongotest: CORE_TEST_MONGO_URI, or FerretDB
// started for the run). MainCheckingLogs runs a package's tests once per
// kind that CORE_TEST_STORE names: "bolt", "mongo", or (unset) both, bolt
// first, and the second time only the tests that started a server. So the
// end-to-end suites of gql and rest run on both stores in
// every `go test ./...`.
const (
	KindBolt  = "bolt"
	KindMongo = "mongo"
	// EnvStore names the environment variable that picks the kinds.
	EnvStore = "CORE_TEST_STORE"
)

// currentKind is the kind Start uses when no WithStore is given.
var currentKind atomic.Value // string

// Kind is the store kind that Start uses now.
func Kind() string {
	if k, ok := currentKind.Load().(string); ok {
		return k
	}
	return kinds()[0]
}

// kinds returns the kinds CORE_TEST_STORE asks for, in order.
func kinds() []string {
	switch v := strings.TrimSpace(os.Getenv(EnvStore)); v {
	case KindBolt, KindMongo:
		return []string{v}
	case "", "both":
		return []string{KindBolt, KindMongo}
	default:
		fmt.Fprintf(os.Stderr, "servertest: %s=%q: want bolt, mongo or both; using both\n", EnvStore, v)
		return []string{KindBolt, KindMongo}
	}
}

// runOnStores runs the tests once per kind and returns the worst exit code.
// Benchmarks and fuzzing run once, on the first kind: they measure or
// explore the code, not the store.
func runOnStores(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	ks := kinds()
	if flagSet("test.bench") || flagSet("test.fuzz") {
		ks = ks[:1]
	}
	code := 0
	for i, k := range ks {
		if i > 0 {
			// Again only the tests that started a server: the others do
			// not depend on the store.
			names := serverTests()
			if len(names) == 0 {
				break
			}
			if err := flag.Set("test.run", "^("+strings.Join(names, "|")+")$"); err != nil {
				fmt.Fprintf(os.Stderr, "servertest: %v\n", err)
				return 1
			}
		}
		currentKind.Store(k)
		start := time.Now()
		if c := m.Run(); c != 0 {
			code = c
		}
		if testing.Verbose() {
			fmt.Fprintf(os.Stderr, "servertest: the tests ran on the %s store in %v\n", k, time.Since(start).Round(time.Millisecond))
		}
	}
	mongotest.Stop()
	return code
}

// started records the top-level tests that started a server.
var started struct {
	sync.Mutex
	names map[string]bool
}

func noteServerTest(t testing.TB) {
	name, _, _ := strings.Cut(t.Name(), "/")
	started.Lock()
	defer started.Unlock()
	if started.names == nil {
		started.names = map[string]bool{}
	}
	started.names[regexp.QuoteMeta(name)] = true
}

// serverTests returns the recorded tests as quoted patterns, sorted.
func serverTests() []string {
	started.Lock()
	defer started.Unlock()
	return slices.Sorted(maps.Keys(started.names))
}

func flagSet(name string) bool {
	f := flag.Lookup(name)
	return f != nil && f.Value.String() != ""
}

// WithStore runs the server on st, which the test owns (Start does not
// close it). Two servers given stores of one MongoDB database behave as two
// cored processes behind a load balancer.
func WithStore(st store.Store) Option {
	return func(o *options) { o.store = st }
}

// WithSyncInterval sets how often the server's registry looks for changes
// made by other processes on the same store (default 500 ms).
func WithSyncInterval(d time.Duration) Option {
	return func(o *options) { o.syncEvery = d }
}

// openStore opens the store of a server of the current kind; t.Cleanup
// closes it (and drops its MongoDB database).
func openStore(t testing.TB) store.Store {
	t.Helper()
	if Kind() == KindMongo {
		return mongotest.Open(t)
	}
	return bolttest.Open(t)
}
