package files_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/tenant"
)

// TestUploadAndDownload uploads one and several files (curl's multipart
// form) and reads them back: the records, the content with its headers,
// Range and ETag, a record referencing a file, and the owner rule and
// grants, through which another account and an anonymous caller read a
// file exactly as a missing one until a grant lets them.
func TestUploadAndDownload(t *testing.T) {
	t.Parallel()
	a := newApp(t, tenant.Settings{AnonymousRequests: true})
	adaID, ada := a.session("ada")
	bobID, bob := a.session("bob")

	logo := pngOf(t, 30, 20)
	text := []byte(strings.Repeat("plain text, not an image. ", 40))
	recs := a.uploaded("/upload/avatars/2024", ada, part{"logo.png", logo}, part{`C:\Users\ada\notes.md`, text})
	img, doc := recs[0], recs[1]
	sum := sha256.Sum256(logo)
	for k, want := range map[string]any{"name": "logo.png", "directory": "avatars/2024", "path": "/avatars/2024/logo.png", "extension": "png",
		"type": "image/png", "size": float64(len(logo)), "status": "UPLOADED", "sha256": hex.EncodeToString(sum[:]),
		"width": float64(30), "height": float64(20)} {
		if img[k] != want {
			t.Errorf("the image's %s = %v, want %v", k, img[k], want)
		}
	}
	core := img["core"].(map[string]any)
	if core["createdBy"] != adaID {
		t.Errorf("the file's owner is %v, want ada (%s)", core["createdBy"], adaID)
	}
	imgURL := img["url"].(map[string]any)["path"].(string)
	if want := fmt.Sprintf("/file/%s-%s.png", core["instanceId"], core["id"]); imgURL != want {
		t.Errorf("url.path = %q, want %q", imgURL, want)
	}
	if doc["name"] != "notes.md" || doc["type"] != "text/plain; charset=utf-8" || doc["extension"] != "txt" || doc["width"] != nil {
		t.Errorf("the text file's record: %v", doc)
	}
	docURL := doc["url"].(map[string]any)["path"].(string)

	// The same door under /rest/v1, and with no directory.
	rest := a.uploaded("/rest/v1/upload/", ada, part{"r.txt", []byte("hello")})[0]
	if rest["directory"] != "" || rest["path"] != "/r.txt" {
		t.Errorf("an upload to /rest/v1/upload/: %v", rest)
	}

	// The owner reads the content, with its headers.
	res, body := a.download(imgURL, ada, nil)
	if res.StatusCode != http.StatusOK || !bytes.Equal(body, logo) {
		t.Fatalf("download: %d, %d bytes (want %d)", res.StatusCode, len(body), len(logo))
	}
	etag := `"` + img["sha256"].(string) + `"`
	for h, want := range map[string]string{"Content-Type": "image/png", "Content-Length": fmt.Sprint(len(logo)), "ETag": etag,
		"X-Content-Type-Options": "nosniff", "Content-Disposition": `inline; filename=logo.png`, "Accept-Ranges": "bytes"} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox;") {
		t.Errorf("Content-Security-Policy %q: want the sandbox", csp)
	}
	if res, body := a.download(imgURL, ada, map[string]string{"If-None-Match": etag}); res.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("If-None-Match with the ETag: %d, %d bytes; want 304", res.StatusCode, len(body))
	}
	if res, body := a.download(docURL, ada, map[string]string{"Range": "bytes=6-9"}); res.StatusCode != http.StatusPartialContent ||
		string(body) != string(text[6:10]) || res.Header.Get("Content-Range") != fmt.Sprintf("bytes 6-9/%d", len(text)) {
		t.Errorf("Range: %d %q %q", res.StatusCode, body, res.Header.Get("Content-Range"))
	}
	// A token in ?token= (an <img src>) reads as the header does.
	if res, body := a.download(imgURL+"?token="+ada, "", nil); res.StatusCode != http.StatusOK || !bytes.Equal(body, logo) {
		t.Errorf("download with ?token=: %d", res.StatusCode)
	}

	// Another account, an anonymous caller, a wrong extension and a
	// missing file all get the one answer.
	missingStatus, missing := a.download(strings.Replace(imgURL, core["id"].(string), "01ARZ3NDEKTSV4RRFFQ69G5FAV", 1), ada, nil)
	if missingStatus.StatusCode != http.StatusNotFound {
		t.Fatalf("a missing file answered %d: %s", missingStatus.StatusCode, missing)
	}
	refused := map[string]func() (*http.Response, []byte){
		"bob":             func() (*http.Response, []byte) { return a.download(imgURL, bob, nil) },
		"anonymous":       func() (*http.Response, []byte) { return a.download(imgURL, "", nil) },
		"wrong extension": func() (*http.Response, []byte) { return a.download(strings.TrimSuffix(imgURL, "png")+"txt", ada, nil) },
		"unknown instance": func() (*http.Response, []byte) {
			return a.download(strings.Replace(imgURL, core["instanceId"].(string), "01ARZ3NDEKTSV4RRFFQ69G5FAV", 1), ada, nil)
		},
	}
	for who, get := range refused {
		if res, body := get(); res.StatusCode != http.StatusNotFound || !bytes.Equal(body, missing) {
			t.Errorf("%s: %d %s; want exactly a missing file's answer %s", who, res.StatusCode, body, missing)
		}
	}
	// bob cannot find the record either.
	findFiles := `query { find(type: File, arcql: "*") { edges { node { ... on File { name } } } } }`
	if n := len(a.gql(bob, findFiles, nil)["find"].(map[string]any)["edges"].([]any)); n != 0 {
		t.Errorf("bob finds %d files of ada's", n)
	}

	// Grants let them read it.
	a.grant(ada, core["id"].(string), "anonymous", bobID)
	if res, body := a.download(imgURL, bob, nil); res.StatusCode != http.StatusOK || !bytes.Equal(body, logo) {
		t.Errorf("bob with a grant: %d %s", res.StatusCode, body)
	}
	if res, body := a.download(imgURL, "", nil); res.StatusCode != http.StatusOK || !bytes.Equal(body, logo) {
		t.Errorf("anonymous with a grant to anonymous: %d %s", res.StatusCode, body)
	}

	// A record references files as it references any record.
	d := a.gql(ada, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{
		"Profile": map[string]any{"name": "ada", "avatar": map[string]any{"core": map[string]any{"id": core["id"]}},
			"attachments": []any{map[string]any{"core": map[string]any{"id": doc["core"].(map[string]any)["id"]}}}}}})
	profileID := d["upsert"].([]any)[0].(map[string]any)["id"].(string)
	d = a.gql(ada, `query($id: String!) { get(type: Profile, id: $id) { ... on Profile { avatar { name width url { path } } attachments { name } } } }`,
		map[string]any{"id": profileID})
	got := d["get"].(map[string]any)
	if got["avatar"].(map[string]any)["url"].(map[string]any)["path"] != imgURL || got["attachments"].([]any)[0].(map[string]any)["name"] != "notes.md" {
		t.Errorf("the profile's files: %v", got)
	}
	// File records are made by uploads only.
	status, body2 := a.env.GraphQL(a.domain, ada, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{
		"File": map[string]any{"core": map[string]any{"id": core["id"]}, "size": 1}}})
	if _, code := servertest.FirstError(body2); code != "BAD_REQUEST" {
		t.Errorf("changing a File by upsert: %d %v; want BAD_REQUEST", status, body2)
	}

	// Trashed, then deleted: gone, and its content with it.
	docID := doc["core"].(map[string]any)["id"].(string)
	a.gql(ada, `mutation($q: String!) { trash(type: File, arcql: $q) }`, map[string]any{"q": fmt.Sprintf("core.id = '%s'", docID)})
	if res, body := a.download(docURL, ada, nil); res.StatusCode != http.StatusNotFound || !bytes.Equal(body, missing) {
		t.Errorf("a trashed file: %d %s", res.StatusCode, body)
	}
	a.gql(ada, `mutation($q: String!) { delete(type: File, arcql: $q, clearArrayReferences: true) }`, map[string]any{"q": fmt.Sprintf("core.id = '%s'", docID)})
	if res, _ := a.download(docURL, ada, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted file: %d", res.StatusCode)
	}
	checkContent(t, a, docID, false)
	checkContent(t, a, core["id"].(string), true)
	d = a.gql(ada, `query($id: String!) { get(type: Profile, id: $id) { ... on Profile { attachments { name } } } }`, map[string]any{"id": profileID})
	if att := d["get"].(map[string]any)["attachments"]; att != nil && len(att.([]any)) != 0 {
		t.Errorf("clearArrayReferences left the deleted file in the list: %v", att)
	}
	usage := a.usage()
	if usage["files"] != float64(2) || usage["fileBytes"] != float64(len(logo)+5) {
		t.Errorf("usage after one delete: files %v, fileBytes %v; want 2 and %d", usage["files"], usage["fileBytes"], len(logo)+5)
	}
	if sb, _ := usage["storageBytes"].(float64); sb <= float64(len(logo)+5) {
		t.Errorf("usage's storageBytes %v does not count the files' %d bytes and the records'", sb, len(logo)+5)
	}

	// Deleting the instance removes its files' contents.
	if status, body := a.env.Admin(http.MethodDelete, "/instances/"+a.domain, nil); status != http.StatusOK && status != http.StatusNoContent {
		t.Fatalf("deleting the instance: %d %v", status, body)
	}
	checkContent(t, a, core["id"].(string), false)
}

// TestAnonymousNeedsTheInstancesConsent: a grant to anonymous on an
// instance that does not allow anonymous requests lets no anonymous
// caller download the file (it answers as a missing file), and turning
// them on lets the grant work.
func TestAnonymousNeedsTheInstancesConsent(t *testing.T) {
	t.Parallel()
	a := newApp(t, tenant.Settings{})
	_, ada := a.session("ada")
	logo := pngOf(t, 8, 8)
	rec := a.uploaded("/upload/", ada, part{"logo.png", logo})[0]
	url := rec["url"].(map[string]any)["path"].(string)
	a.grant(ada, rec["core"].(map[string]any)["id"].(string), "anonymous")
	if res, body := a.download(url, "", nil); res.StatusCode != http.StatusNotFound || bytes.Equal(body, logo) {
		t.Errorf("anonymous on an instance without anonymous requests: %d, the content: %v; want a missing file's 404", res.StatusCode, bytes.Equal(body, logo))
	}
	if st, body := a.env.Admin(http.MethodPatch, "/instances/"+a.domain, map[string]any{"anonymousRequests": true}); st != http.StatusOK {
		t.Fatalf("turning anonymous requests on: %d %v", st, body)
	}
	if res, body := a.download(url, "", nil); res.StatusCode != http.StatusOK || !bytes.Equal(body, logo) {
		t.Errorf("anonymous once the instance allows it: %d, %d bytes", res.StatusCode, len(body))
	}
}
