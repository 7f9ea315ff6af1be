package files_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/corehq/core/internal/poll"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

// TestFilesAcrossProcesses: two servers on one store, as two processes
// share a MongoDB (a store handle each, the contents in its GridFS; on
// the embedded store one file and one folder): a file uploaded through
// one downloads whole through the other, a thumbnail made by the second
// is served by the first, and a file deleted through the second is gone
// through the first, its content with it.
func TestFilesAcrossProcesses(t *testing.T) {
	t.Parallel()
	var first *app
	var second *servertest.Env
	if servertest.Kind() == servertest.KindMongo {
		stores := mongotest.Shared(t, 2)
		first = newApp(t, tenant.Settings{}, servertest.WithStore(stores[0]))
		second = servertest.Start(t, servertest.WithStore(stores[1]))
	} else {
		first = newApp(t, tenant.Settings{})
		second = servertest.Start(t, servertest.WithStore(first.env.Store))
	}
	poll.Until(t, "the second server to see the instance", func() bool { _, ok := second.Directory.Lookup(first.domain); return ok })
	other := &app{t: t, env: second, domain: first.domain, token: first.token, instID: first.instID}

	logo := pngOf(t, 40, 30)
	rec := first.uploaded("/upload/", first.token, part{"logo.png", logo})[0]
	url := rec["url"].(map[string]any)["path"].(string)
	id := rec["core"].(map[string]any)["id"].(string)
	if res, body := other.download(url, other.token, nil); res.StatusCode != http.StatusOK || !bytes.Equal(body, logo) {
		t.Fatalf("the other server's download: %d, %d bytes, want the %d uploaded", res.StatusCode, len(body), len(logo))
	}
	res, thumb := other.download(url+"?thumb=100x100", other.token, nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("the other server's thumbnail: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res, again := first.download(url+"?thumb=100x100", first.token, nil); res.StatusCode != http.StatusOK || !bytes.Equal(again, thumb) {
		t.Errorf("the first server's thumbnail: %d, the same as the other's: %v", res.StatusCode, bytes.Equal(again, thumb))
	}

	other.gql(other.token, `mutation($q: String!) { delete(type: File, arcql: $q) }`, map[string]any{"q": "core.id = '" + id + "'"})
	if res, _ := first.download(url, first.token, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("the first server's download of the file deleted through the other: %d, want 404", res.StatusCode)
	}
	checkContent(t, first, id, false)
}
