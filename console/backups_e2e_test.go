package console_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestBackupsInABrowser: in the console (console/e2e/backups.mjs) an
// operator takes a backup, sees it listed and downloads it (a tar.gz whose
// first entry is the manifest), exports an instance from its Manage panel
// and imports the file into a new instance, whose records the data
// browser then shows; a file that is not an export is refused and makes
// no instance. Screenshots go where the console test's do.
func TestBackupsInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	chromium, node, _ := browserTools(t)
	_, script := nodetest.Script(t, "console backups browser test", filepath.Join("e2e", "backups.mjs"), "playwright-core")
	artifacts := os.Getenv("CORE_CONSOLE_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(filepath.Dir(script), "artifacts")
	}
	artifacts, err := filepath.Abs(artifacts)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("console backups browser test: screenshots in %s\n", artifacts)

	dir := t.TempDir()
	env := servertest.Start(t, servertest.WithBackups(dir))
	env.PutRelease("notes", "v1", `type Note { text: String }`)
	token := env.CreateInstance("notes.test", "notes", "v1", tenant.Settings{})
	if status, body := env.GraphQL("notes.test", token, `mutation { upsert(values: {Note: [{text: "first"}, {text: "second"}, {text: "third"}]}) { id } }`, nil); status != 200 || body["errors"] != nil {
		t.Fatalf("seeding: %d %v", status, body)
	}
	runScript(t, node, script, 3*time.Minute,
		"CORE_URL="+env.URL,
		"CORE_ADMIN_TOKEN="+servertest.AdminToken,
		"CORE_ARTIFACTS="+artifacts,
		"CHROMIUM="+chromium,
	)

	// The backup the console took is in the server's folder.
	if kept, _ := filepath.Glob(filepath.Join(dir, "*.tar.gz")); len(kept) != 1 {
		t.Errorf("the backup folder holds %v, want the one backup", kept)
	}
	// The import made copy.test, with the three notes, ids kept.
	if _, ok := env.Directory.Lookup("copy.test"); !ok {
		t.Fatal("no instance copy.test after the import")
	}
	find := `{ find(type: Note, arcql: "* SORT core.id ASC") { edges { node { ... on Note { text core { id } } } } } }`
	_, session := env.Admin(http.MethodPost, "/instances/copy.test/session", nil)
	_, copied := env.GraphQL("copy.test", session["token"].(string), find, nil)
	_, original := env.GraphQL("notes.test", token, find, nil)
	data := func(b map[string]any) map[string]any { d, _ := b["data"].(map[string]any); return d }
	if got, want := dump(data(copied)), dump(data(original)); got != want || len(got) < 50 {
		t.Errorf("copy.test's notes:\n%s\nwant notes.test's:\n%s", got, want)
	}
}
