package gql_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/corehq/core/gql"
	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
)

// TestSubscriptionsWithRealClients runs e2e-clients/clients.mjs against the
// real server: graphql-ws's and graphql-sse's own clients and a hand-written
// legacy graphql-ws client receive CREATED, UPDATED, TRASHED, UNTRASHED and
// DELETED with their records, filtered, by id and resumed; two accounts
// each receive only their own books; a logout ends that session's
// subscriptions on every transport.
func TestSubscriptionsWithRealClients(t *testing.T) {
	t.Parallel()
	// Skips without node or the packages (npm ci in e2e-clients), and
	// fails instead under nodetest.EnvRequire, as .ci/run sets it.
	node, script := nodetest.Script(t, "subscription clients test", filepath.Join("e2e-clients", "clients.mjs"),
		"graphql-ws", "graphql-sse", "ws", "graphql")
	cfg := gql.DefaultConfig()
	cfg.SessionCheck = 50 * time.Millisecond // the logout is noticed at once
	admin := newBookstore(t, servertest.WithGQLConfig(cfg))
	ada, bob, _, _ := admin.adaAndBob()

	// A bound on the whole run, not a timing assertion: the script waits
	// on events, each at most hangGuard.
	out := nodetest.RunOK(t, node, script,
		"CORE_URL="+admin.env.URL,
		"CORE_DOMAIN="+admin.domain,
		"CORE_TOKEN="+admin.token,
		"CORE_ADA_TOKEN="+ada.token,
		"CORE_BOB_TOKEN="+bob.token,
		fmt.Sprintf("HANG_GUARD_MS=%d", hangGuard.Milliseconds()),
	)
	t.Logf("node %s:\n%s", filepath.Base(script), out)
}
