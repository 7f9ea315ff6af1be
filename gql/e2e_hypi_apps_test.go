package gql_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestHypiExampleApps publishes the schemas of Hypi's public to-do example
// apps as their repositories have them, hypi read as core
// (testdata/e2e/hypi-apps, its README names each file's origin), and runs
// each app's own documents through graphql-js (e2e-clients/hypi-apps.mjs),
// on both stores as every server test here: the client builds the
// introspected schema (valid GraphQL, with the apps' interface Item),
// validates every document file against it, signs up with emails:
// [{value: $email}], logs in by e-mail, upserts through
// CoreUpsertInputUnion, finds and gets with the fragments selecting
// core { id }, updates, and deletes with the defaulted
// $clearArrayReferences.
func TestHypiExampleApps(t *testing.T) {
	t.Parallel()
	node, script := nodetest.Script(t, "Hypi example apps test", filepath.Join("e2e-clients", "hypi-apps.mjs"), "graphql")
	for _, app := range []string{"react-todo", "angular-todo"} {
		t.Run(app, func(t *testing.T) {
			t.Parallel()
			dir, err := filepath.Abs(filepath.Join("..", "testdata", "e2e", "hypi-apps", app))
			if err != nil {
				t.Fatal(err)
			}
			sdl, err := os.ReadFile(filepath.Join(dir, "schema.graphql"))
			if err != nil {
				t.Fatal(err)
			}
			env := servertest.Start(t)
			env.PutRelease(app, "v1", string(sdl))
			domain := app + ".test"
			token := env.CreateInstance(domain, app, "v1", tenant.Settings{})
			// A bound on the whole run against a hang, not a timing assertion.
			nodetest.RunOK(t, node, script, "CORE_URL="+env.URL, "CORE_DOMAIN="+domain,
				"CORE_TOKEN="+token, "APP_DIR="+dir, "APP="+app)
		})
	}
}
