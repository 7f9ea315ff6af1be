package gql_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/internal/testfiles"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// bothStores runs test once per store, each on a server of its own.
func bothStores(t *testing.T, test func(t *testing.T, env *servertest.Env)) {
	t.Helper()
	for kind, open := range map[string]func(testing.TB) store.Store{
		servertest.KindBolt:  func(t testing.TB) store.Store { return bolttest.Open(t) },
		servertest.KindMongo: func(t testing.TB) store.Store { return mongotest.Open(t) },
	} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			test(t, servertest.Start(t, servertest.WithStore(open(t))))
		})
	}
}

// TestHypiTodoApp publishes a to-do schema written as Hypi's example apps
// write theirs (metadata declared, hypi read as core) and runs such an
// app's documents through graphql-js on both stores (e2e-clients/
// hypi-todo.mjs): the client builds the introspected schema and validates
// each document against it; sign-up with emails: [{value: $email}], login
// by e-mail and by name, upsert through CoreUpsertInputUnion, get and find
// with fragments selecting core { id }, and delete with a defaulted
// $clearArrayReferences answer as the app expects.
func TestHypiTodoApp(t *testing.T) {
	t.Parallel()
	node, script := nodetest.Script(t, "Hypi to-do app test", filepath.Join("e2e-clients", "hypi-todo.mjs"), "graphql")
	bothStores(t, func(t *testing.T, env *servertest.Env) {
		env.PutRelease("todo", "v1", testfiles.Read(t, "e2e", "hypi-todo.graphql"))
		token := env.CreateInstance("todo.test", "todo", "v1", tenant.Settings{})
		// A bound on the whole run against a hang, not a timing assertion.
		out, err := nodetest.Run(node, script, 3*time.Minute, "CORE_URL="+env.URL, "CORE_DOMAIN=todo.test", "CORE_TOKEN="+token)
		if err != nil || !strings.HasSuffix(string(out), "\nok\n") && string(out) != "ok\n" {
			t.Fatalf("node %s failed (%v):\n%s", filepath.Base(script), err, out)
		}
	})
}
