package console_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/corehq/core/internal/nodetest"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// TestUploadedFilesInABrowser, on both stores: a page of another origin uploads an HTML
// page and an SVG with script through a real <input type=file> and
// fetch (console/e2e/files.mjs), and opening them in the console's tab
// runs none of their script on the service's origin. The console's data
// browser shows an uploaded image and uploads a Note's File field from
// the record form; its Files view lists the three files with their
// name, type, size and owner, a thumbnail of the image and a download
// link that downloads its bytes.
func TestUploadedFilesInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the browser test starts chromium")
	}
	chromium, node, _ := browserTools(t)
	_, script := nodetest.Script(t, "console files browser test", filepath.Join("e2e", "files.mjs"), "playwright-core")
	// On both stores: the contents in files beside the embedded store,
	// and in GridFS on the MongoDB-wire test server.
	for _, kind := range []string{servertest.KindBolt, servertest.KindMongo} {
		t.Run(kind, func(t *testing.T) {
			var opts []servertest.Option
			if kind == servertest.KindMongo {
				opts = append(opts, servertest.WithStore(mongotest.Open(t)))
			}
			env := servertest.Start(t, opts...)
			env.PutRelease("files", "v1", `type Note { text: String attachment: File }`)
			token := env.CreateInstance("files.test", "files", "v1", tenant.Settings{CORS: tenant.CORS{AllowedOrigins: []string{"*"}}})
			runScript(t, node, script, 3*time.Minute,
				"CORE_URL="+env.URL,
				"CORE_ADMIN_TOKEN="+servertest.AdminToken,
				"CORE_TOKEN="+token,
				"CHROMIUM="+chromium,
			)
		})
	}
}
