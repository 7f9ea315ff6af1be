package backup_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corehq/core/internal/hooktest"
	"github.com/corehq/core/keyring"
	"github.com/corehq/core/server/servertest"
	"github.com/corehq/core/store/bolt/bolttest"
	"github.com/corehq/core/store/mongo/mongotest"
	"github.com/corehq/core/tenant"
)

func TestMain(m *testing.M) { os.Exit(mongotest.Main(m)) }

const transferSDL = `type Author @indices(sets: [["name"]]) { name: String  best: Book  books: [Book!] }
type Book { title: String  price: Float  authorid: Int }
`

// transferQueries are answered the same by the exported instance and by
// the one imported from it.
var transferQueries = []string{
	`{ find(type: Book, arcql: "*", first: 100) { edges { cursor node { ... on Book { title price authorid } } } } }`,
	`{ find(type: Author, arcql: "name = 'Ann'") { edges { cursor node { ... on Author { name best { title } books { title price } } } } } }`,
	`{ aggregate { book { core { count } price { sum avg min max } authorid { sum } } } }`,
	`{ find(type: Account, arcql: "username = 'ann'") { edges { cursor } } }`,
}

// TestExportImportAcrossStores exports an instance of the embedded store
// (references, a trashed record, an account, a grant) through the admin
// API and imports it on a server on the MongoDB-wire test server, which
// then answers the same finds, gets, aggregates and logins; a corrupt
// export, a taken domain and an export past the quota are refused with
// nothing kept.
func TestExportImportAcrossStores(t *testing.T) {
	t.Parallel()
	src := servertest.Start(t, servertest.WithStore(bolttest.Open(t)))
	src.PutRelease("shop", "v1", transferSDL)
	token := src.CreateInstance("src.test", "shop", "v1", tenant.Settings{})
	gq := func(e *servertest.Env, domain, token, q string, vars map[string]any) map[string]any {
		t.Helper()
		st, body := e.GraphQL(domain, token, q, vars)
		if st != 200 || body["errors"] != nil {
			t.Fatalf("%s on %s: %d %v", q, domain, st, body)
		}
		return body["data"].(map[string]any)
	}
	up := func(typ string, v map[string]any) string {
		d := gq(src, "src.test", token, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`, map[string]any{"v": map[string]any{typ: v}})
		return d["upsert"].([]any)[0].(map[string]any)["id"].(string)
	}
	ref := func(id string) map[string]any { return map[string]any{"core": map[string]any{"id": id}} }
	var books []string
	for i, p := range []float64{12.5, 3, 7.25} {
		books = append(books, up("Book", map[string]any{"title": "T" + string(rune('a'+i)), "price": p, "authorid": i + 1}))
	}
	author := up("Author", map[string]any{"name": "Ann", "best": ref(books[1]), "books": []any{ref(books[0]), ref(books[1])}})
	gq(src, "src.test", token, `mutation($a: String!) { trash(type: Book, arcql: $a) }`, map[string]any{"a": "core.id = '" + books[2] + "'"})
	acct := gq(src, "src.test", token, `mutation($v: AccountInput!) { createAccount(value: $v) { id } }`,
		map[string]any{"v": map[string]any{"username": "ann", "password": map[string]any{"value": "correct horse battery"}}})
	up("AccessRight", map[string]any{"resource": "*", "resourceType": "Book", "operationType": "Query", "operation": "find",
		"permissionType": "SBP", "members": []any{ref(acct["createAccount"].(map[string]any)["id"].(string))}})
	// Files: an image and a text file, their contents carried by the
	// export and downloaded from the imported instance.
	fileBodies := map[string][]byte{"logo.png": pngBytes(t), "notes.txt": []byte("a file's content, carried along\n")}
	files := uploadFiles(t, src, "src.test", token, fileBodies)
	// An event hook of the books: imported, it delivers the new
	// instance's changes, signed with the same secret.
	rcv := hooktest.Start(t)
	hook := up("EventHook", map[string]any{"url": rcv.URL, "secret": rcv.Secret, "types": []any{"Book"}})
	getAuthor := `query($id: String!) { get(type: Author, id: $id) { ... on Author { name best { title } books { title } } } }`
	want := map[string]any{}
	for _, q := range transferQueries {
		want[q] = gq(src, "src.test", token, q, nil)
	}
	want[getAuthor] = gq(src, "src.test", token, getAuthor, map[string]any{"id": author})

	res, export := src.DoRaw("GET", "/admin/v1/instances/src.test/export", src.AdminHeaders(), nil)
	if res.StatusCode != 200 || res.Header.Get("content-type") != "application/gzip" {
		t.Fatalf("export: %d %s", res.StatusCode, res.Header.Get("content-type"))
	}

	dst := servertest.Start(t, servertest.WithStore(mongotest.Open(t)))
	dst.PutRelease("shop", "v1", transferSDL)
	dst.PutRelease("shop", "v0", `type Book { title: String }`)
	importInto := func(domain string, body []byte) (int, map[string]any) {
		t.Helper()
		domain, query, _ := strings.Cut(domain, "?")
		if query != "" {
			query = "?" + query
		}
		res, out := dst.DoRaw("POST", "/admin/v1/instances/"+domain+"/import"+query, dst.AdminHeaders(), body)
		var m map[string]any
		_ = jsonUnmarshal(out, &m)
		return res.StatusCode, m
	}
	st, body := importInto("moved.test", export)
	newToken, _ := body["token"].(string)
	if st != http.StatusCreated || newToken == "" {
		t.Fatalf("import: %d %v", st, body)
	}
	for q, w := range want {
		var vars map[string]any
		if q == getAuthor {
			vars = map[string]any{"id": author}
		}
		if d := cmp.Diff(w, gq(dst, "moved.test", newToken, q, vars)); d != "" {
			t.Errorf("%s (-exported +imported):\n%s", q, d)
		}
	}
	for name, id := range files {
		d := gq(dst, "moved.test", newToken, `query($id: String!) { get(type: File, id: $id) { ... on File { url { path } width } } }`, map[string]any{"id": id})
		f := d["get"].(map[string]any)
		res, got := dst.DoRaw("GET", f["url"].(map[string]any)["path"].(string), map[string]string{"authorization": newToken}, nil)
		if res.StatusCode != 200 || !bytes.Equal(got, fileBodies[name]) {
			t.Errorf("%s downloaded from the imported instance (%v): %d, %d bytes (%.100s), want the %d uploaded", name, f["url"], res.StatusCode, len(got), got, len(fileBodies[name]))
		}
		if name == "logo.png" && f["width"] != float64(3) {
			t.Errorf("the imported image's width: %v, want 3", f["width"])
		}
	}
	if st, u := dst.Admin("GET", "/instances/moved.test/usage", nil); st != 200 || dumpJSON(u["files"]) != "2" {
		t.Errorf("the imported instance's usage: %d %v, want its 2 files counted", st, u)
	}
	moved := gq(dst, "moved.test", newToken, `mutation($v: CoreUpsertInputUnion!) { upsert(values: $v) { id } }`,
		map[string]any{"v": map[string]any{"Book": map[string]any{"title": "written after the move"}}})["upsert"].([]any)[0].(map[string]any)["id"].(string)
	rcv.WaitFor(t, "the imported hook's event of a new book", func(r *hooktest.Receiver) bool {
		for _, e := range r.Events() {
			if e.Op == "CREATED" && e.Record == moved && e.Instance == "moved.test" {
				return true
			}
		}
		return false
	})
	if _, _, bad := rcv.Posts(); len(bad) > 0 {
		t.Errorf("the imported hook's posts fail their signature: %v", bad)
	}
	// A server of other keys cannot open the hook's secret: the hook is
	// imported disabled, without it.
	other := servertest.Start(t, servertest.WithStore(bolttest.Open(t)), servertest.WithKeys(keyring.Hold(keyring.Generate())))
	other.PutRelease("shop", "v1", transferSDL)
	res, out := other.DoRaw("POST", "/admin/v1/instances/other.test/import", other.AdminHeaders(), export)
	var created map[string]any
	if err := jsonUnmarshal(out, &created); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("import on a server of other keys: %d %s", res.StatusCode, out)
	}
	if h := gq(other, "other.test", created["token"].(string), `query($id: String!) { get(type: EventHook, id: $id) { ... on EventHook { url enabled } } }`,
		map[string]any{"id": hook})["get"].(map[string]any); h["enabled"] != false || h["url"] != rcv.URL {
		t.Errorf("the hook imported on a server of other keys: %v, want it disabled", h)
	}
	login := gq(dst, "moved.test", "", `query { login(username: "ann", password: "correct horse battery") { sessionToken } }`, nil)
	if tok, _ := login["login"].(map[string]any)["sessionToken"].(string); tok == "" {
		t.Errorf("login on the imported instance: %v", login)
	}

	for _, tc := range []struct {
		name, domain string
		body         []byte
		status       int
	}{
		{"cut short", "cut.test", export[:len(export)-40], http.StatusBadRequest},
		{"not an export", "junk.test", []byte("hello"), http.StatusBadRequest},
		{"the domain is taken", "moved.test", export, http.StatusConflict},
		{"a release without its types", "narrow.test?release=v0", export, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := importInto(tc.domain, tc.body)
			if st != tc.status {
				t.Errorf("import: %d %v, want %d", st, body, tc.status)
			}
			if tc.domain == "narrow.test?release=v0" && !bytes.Contains([]byte(dumpJSON(body)), []byte("has no")) {
				t.Errorf("an import into a release without the records' types: %v, want the record and what the release lacks named", body)
			}
			if domain, _, _ := strings.Cut(tc.domain, "?"); domain != "moved.test" {
				if st, _ := dst.Admin("GET", "/instances/"+domain, nil); st != http.StatusNotFound {
					t.Errorf("after a failed import, GET of the instance = %d, want 404", st)
				}
			}
		})
	}
	t.Run("over quota", func(t *testing.T) {
		if st, body := src.Admin("PATCH", "/instances/src.test", map[string]any{"quota": map[string]any{"records": 3}}); st != 200 {
			t.Fatalf("setting a quota: %d %v", st, body)
		}
		_, export := src.DoRaw("GET", "/admin/v1/instances/src.test/export", src.AdminHeaders(), nil)
		st, body := importInto("quota.test", export)
		if st != http.StatusForbidden || !bytes.Contains([]byte(dumpJSON(body)), []byte("QUOTA_EXCEEDED")) {
			t.Errorf("import past the quota: %d %v", st, body)
		}
		if st, _ := dst.Admin("GET", "/instances/quota.test", nil); st != http.StatusNotFound {
			t.Errorf("after a refused import, GET of the instance = %d, want 404", st)
		}
	})
}

// pngBytes is a 3 × 2 PNG.
func pngBytes(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// uploadFiles uploads each named content (one multipart part each, as
// curl -F does) and returns the File record ids by name.
func uploadFiles(t *testing.T, e *servertest.Env, domain, token string, bodies map[string][]byte) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for name, data := range bodies {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		fw, _ := w.CreateFormFile("0", name)
		fw.Write(data)
		w.Close()
		res, out := e.DoRaw("POST", "/upload/", map[string]string{tenant.Header: domain, "authorization": token, "content-type": w.FormDataContentType()}, b.Bytes())
		var recs []map[string]any
		if res.StatusCode != http.StatusCreated || json.Unmarshal(out, &recs) != nil || len(recs) != 1 {
			t.Fatalf("uploading %s: %d %s", name, res.StatusCode, out)
		}
		ids[name] = recs[0]["core"].(map[string]any)["id"].(string)
	}
	return ids
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func dumpJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
