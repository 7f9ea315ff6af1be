package gql_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/server/servertest"
)

// envRequireBrowser is console/browser_e2e_test.go's EnvRequireBrowser:
// .ci/run sets it once Node.js and the npm packages are installed, and a
// missing node or node_modules then fails the test instead of skipping it.
const envRequireBrowser = "CORE_TEST_REQUIRE_BROWSER"

// TestSubscriptionsWithRealClients runs e2e-clients/clients.mjs against the
// real server: graphql-ws's and graphql-sse's own clients and a hand-written
// legacy graphql-ws client receive CREATED, UPDATED, TRASHED, UNTRASHED and
// DELETED with their records, filtered, by id and resumed; two accounts
// each receive only their own books; a logout ends that session's
// subscriptions on every transport.
func TestSubscriptionsWithRealClients(t *testing.T) {
	t.Parallel()
	node, script := nodeClients(t)
	cfg := gql.DefaultConfig()
	cfg.SessionCheck = 50 * time.Millisecond // the logout is noticed at once
	admin := newBookstore(t, servertest.WithGQLConfig(cfg))
	admin.newAccount("ada", "", "correct horse battery")
	admin.newAccount("bob", "", "correct horse battery")
	ada, bob := admin.login("ada", "correct horse battery"), admin.login("bob", "correct horse battery")

	// A bound on the whole run, not a timing assertion: the script waits
	// on events, each at most hangGuard.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Base(script))
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(),
		"CORE_URL="+admin.env.URL,
		"CORE_DOMAIN="+admin.domain,
		"CORE_TOKEN="+admin.token,
		"CORE_ADA_TOKEN="+ada.token,
		"CORE_BOB_TOKEN="+bob.token,
		fmt.Sprintf("HANG_GUARD_MS=%d", hangGuard.Milliseconds()),
	)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s failed (%v):\n%s", filepath.Base(script), err, out)
	}
	t.Logf("node %s:\n%s", filepath.Base(script), out)
	if !strings.HasSuffix(string(out), "\nok\n") {
		t.Fatalf("node %s did not finish:\n%s", filepath.Base(script), out)
	}
}

// nodeClients finds node and e2e-clients/clients.mjs with its
// node_modules, or skips (fails under CORE_TEST_REQUIRE_BROWSER) saying
// what is missing and how .ci/run provides it. It is a small copy of the
// node half of console/browser_e2e_test.go's browserTools (test files of
// two packages cannot share a helper without a package of its own).
func nodeClients(t *testing.T) (node, script string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv(envRequireBrowser) != "" {
			t.Fatalf("%s (%s is set)", msg, envRequireBrowser)
		}
		fmt.Printf("subscription clients test skipped: %s\n", msg)
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node: install Node.js (.ci/run installs Debian's nodejs and npm where they are missing)")
	}
	script, err = filepath.Abs(filepath.Join("e2e-clients", "clients.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"graphql-ws", "graphql-sse", "ws", "graphql"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", pkg, "package.json")); err != nil {
			missing("no %s in gql/e2e-clients/node_modules: run npm ci there, as .ci/run does", pkg)
		}
	}
	return node, script
}
