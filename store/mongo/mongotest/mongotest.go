// Package mongotest gives tests a real MongoDB-wire server: the one named
// by CORE_TEST_MONGO_URI, or else FerretDB v1.24 over SQLite, built from the
// repository's tools/ferretdb module (once, cached by the hash of its
// files) and started on a free loopback port with a temporary data
// directory. The server is started on first use and stopped by Main at the
// end of the package's tests; without Main it stops when the test process
// exits (it watches its standard input).
//
// Each Open or Database call gets a database of its own, dropped when the
// test ends, so tests never see each other's data.
package mongotest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	driver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/corehq/core/internal/ferretdb"
	"github.com/corehq/core/internal/toolbin"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/mongo"
)

// EnvURI names the environment variable of an existing server to test on.
const EnvURI = "CORE_TEST_MONGO_URI"

var server struct {
	once sync.Once
	mu   sync.Mutex
	uri  string
	err  error
	proc *ferretdb.Process
	log  *bytes.Buffer
}

// URI returns the test server's URI, starting FerretDB on first use when
// CORE_TEST_MONGO_URI is unset. It fails the test when no server can be had.
func URI(tb testing.TB) string {
	tb.Helper()
	if uri := os.Getenv(EnvURI); uri != "" {
		return uri
	}
	server.once.Do(func() { server.uri, server.err = start() })
	if server.err != nil {
		tb.Fatalf("mongotest: starting the test server: %v", server.err)
	}
	return server.uri
}

// Main runs a package's tests (call it from TestMain) and then stops the
// server they started.
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// Stop stops the FerretDB this process started, if any.
func Stop() {
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.proc == nil {
		return
	}
	server.proc.Stop()
	select {
	case <-server.proc.Exited:
	case <-time.After(10 * time.Second):
		_ = server.proc.Cmd.Process.Kill()
		<-server.proc.Exited
	}
	server.proc = nil
}

// Database returns the URI and the name of a new database on the test
// server, dropped when the test ends.
func Database(tb testing.TB) (uri, name string) {
	tb.Helper()
	uri = URI(tb)
	name = "coretest_" + strings.ToLower(store.NewID())
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := driver.Connect(options.Client().ApplyURI(uri))
		if err != nil {
			tb.Errorf("mongotest: connecting to drop %s: %v", name, err)
			return
		}
		defer c.Disconnect(ctx)
		if err := c.Database(name).Drop(ctx); err != nil {
			tb.Errorf("mongotest: dropping %s: %v", name, err)
		}
	})
	return uri, name
}

// Config returns the store configuration for a database of the test
// server: acknowledged by one node (a test server is standalone), short
// time-outs.
func Config(uri, db string) mongo.Config {
	cfg := mongo.DefaultConfig(uri)
	cfg.Database = db
	cfg.WriteConcern = "1"
	return cfg
}

// Open opens a store on a new database of the test server; the store is
// closed and the database dropped when the test ends. change may adjust
// the configuration.
func Open(tb testing.TB, change ...func(*mongo.Config)) *mongo.Store {
	tb.Helper()
	uri, db := Database(tb)
	cfg := Config(uri, db)
	for _, c := range change {
		c(&cfg)
	}
	return open(tb, cfg)
}

// Shared opens n stores on one new database of the test server, as n
// cored processes sharing it would; they are closed and the database
// dropped when the test ends.
func Shared(tb testing.TB, n int) []*mongo.Store {
	tb.Helper()
	uri, db := Database(tb)
	out := make([]*mongo.Store, n)
	for i := range out {
		out[i] = open(tb, Config(uri, db))
	}
	return out
}

// open opens a store with cfg, closed when the test ends.
func open(tb testing.TB, cfg mongo.Config) *mongo.Store {
	tb.Helper()
	s, err := mongo.Open(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("mongotest: opening a store: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// start builds (when needed) and starts FerretDB, returning its URI.
func start() (string, error) {
	bin, err := Build()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "core-ferretdb-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "-dir", dir, "-remove")
	logBuf := &bytes.Buffer{}
	cmd.Stderr = &lockedWriter{w: logBuf}
	p, err := ferretdb.Start(context.Background(), cmd)
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, logBuf.String())
	}
	server.mu.Lock()
	server.proc, server.log = p, logBuf
	server.mu.Unlock()
	return p.URI, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Build builds the FerretDB test server from tools/ferretdb unless a build
// of the same sources is cached (internal/toolbin), and returns the
// binary's path. The first build takes a couple of minutes.
func Build() (string, error) { return toolbin.Build("ferretdb", "build", "-trimpath", ".") }
